/**
 * Messages whose envelope is wrong, for the fuzz spec: requestId or scene missing, malformed, or
 * contradicting its header, and bad x-request-id / x-scene headers.
 */
import fc from 'fast-check';
import { Draft, exactly, FuzzHeaders, invalid, RANK_HEADERS } from './fuzz-case';
import { body, request, text } from './rank-body.arbitraries';

const idRule = 'must be a non-empty string of at most 256 characters';
const sceneRule = 'must be a non-empty string of at most 100 characters';
/** requestId and scene missing, malformed or contradicting their headers. */
export const badEnvelope: fc.Arbitrary<Draft> = fc
  .tuple(
    body,
    fc.constantFrom(
      'no-id',
      'no-scene',
      'bad-id',
      'bad-id-header-named',
      'bad-scene',
      'id-conflict',
      'scene-conflict',
      'bad-id-header',
      'bad-scene-header',
    ),
    fc.constantFrom<unknown>(7, '', null, 'x'.repeat(257), {}, []),
  )
  .map(([b, kind, junk]): Draft => (ids) => {
    const id = ids.fresh();
    const value = (envelope: [string, unknown][]) => text(request(envelope, b));
    const the = (name: string, rule: string) => exactly(`invalid request: ${name}: ${rule}`);
    const c = (
      v: string,
      headers: FuzzHeaders,
      answer: string | undefined,
      path: string,
      dlq: RegExp,
    ) => ({
      kind: `envelope/${kind}`,
      value: v,
      headers,
      ...invalid(answer, path, dlq),
    });
    const sceneJunk = typeof junk === 'string' && junk.length > 0 ? 'y'.repeat(101) : junk;
    switch (kind) {
      case 'no-id':
        return c(
          value([['scene', 'feed']]),
          {},
          undefined,
          'requestId',
          the('requestId', 'is required (in the value or the x-request-id header)'),
        );
      case 'no-scene':
        return c(
          value([['requestId', id]]),
          {},
          id,
          'scene',
          the('scene', 'is required (in the value or the x-scene header)'),
        );
      case 'bad-id':
        return c(
          value([
            ['requestId', junk],
            ['scene', 'feed'],
          ]),
          {},
          undefined,
          'requestId',
          the('requestId', idRule),
        );
      case 'bad-id-header-named':
        // The value's requestId is unusable; the header still names the caller.
        return c(
          value([
            ['requestId', junk],
            ['scene', 'feed'],
          ]),
          { [RANK_HEADERS.requestId]: id },
          id,
          'requestId',
          the('requestId', idRule),
        );
      case 'bad-scene':
        return c(
          value([
            ['requestId', id],
            ['scene', sceneJunk],
          ]),
          {},
          id,
          'scene',
          the('scene', sceneRule),
        );
      case 'id-conflict':
        return c(
          value([
            ['requestId', id],
            ['scene', 'feed'],
          ]),
          { [RANK_HEADERS.requestId]: `${id}-h` },
          id,
          'requestId',
          the('requestId', `differs from the x-request-id header ("${id}-h")`),
        );
      case 'scene-conflict':
        return c(
          value([
            ['requestId', id],
            ['scene', 'feed'],
          ]),
          { [RANK_HEADERS.scene]: 'other' },
          id,
          'scene',
          the('scene', 'differs from the x-scene header ("other")'),
        );
      case 'bad-id-header':
        return c(
          value([
            ['requestId', id],
            ['scene', 'feed'],
          ]),
          { [RANK_HEADERS.requestId]: '' },
          id,
          'headers.x-request-id',
          the('headers.x-request-id', idRule),
        );
      default:
        return c(
          value([['requestId', id]]),
          { [RANK_HEADERS.scene]: 'z'.repeat(101) },
          id,
          'headers.x-scene',
          the('headers.x-scene', sceneRule),
        );
    }
  });
