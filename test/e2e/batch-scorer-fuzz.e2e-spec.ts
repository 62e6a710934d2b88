/**
 * Fuzzing the batch scorer's input topic through the real broker: a worker process consumes
 * generated messages (test/support/rank-message-fuzz.ts: hostile values, keys and headers mixed
 * with valid requests) from a run-unique 4-partition topic. Properties: the worker never dies;
 * every message is accounted for exactly once, as the README's rules say: each valid one has a
 * 200 result, each bad one a dead letter whose x-dlq-reason names its problem, plus the error
 * result when it named a requestId; a dead letter carries the original key, value and headers
 * and its source topic, partition and offset; every partition is committed to its end. Its
 * bundle's ctr model queues 128 rows under RANK_MAX_CANDIDATES 256, so requests larger than
 * the queue are among the inputs. fast-check generates with a fixed seed (FUZZ_SEED overrides).
 */
import { DEAD_LETTER_HEADERS } from '@app/common';
import fc from 'fast-check';
import type { IHeaders, Message } from 'kafkajs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchScorerProcess } from '../support/batch-scorer-process';
import { writeVersion } from '../support/bundle-versions';
import { eventually } from '../support/eventually';
import { FuzzCase, FuzzHeaders, RequestIds } from '../support/fuzz/fuzz-case';
import { fuzzMessages } from '../support/fuzz/rank-message-fuzz';
import { RankTopics, ReadRecord } from '../support/rank-topics';

const SEED = Number(process.env.FUZZ_SEED || 20_261_201);
const MESSAGES = 1_200;
const PARTITIONS = 4;
const LIMITS = { queueRows: 128, queueModel: 'ctr', maxCandidates: 256 };
const FUZZ_HEADER = 'x-fuzz-id';
/** Bytes per produce request: a record batch over the broker's 1 MB limit would be refused. */
const SEND_BYTES = 400_000;

/**
 * Runs `send` able to encode null header values, as other clients (the Java one, librdkafka) can
 * send them: kafkajs 2.2 writes a null header value correctly but sizes it first with
 * Buffer.byteLength, which throws on null. Only this process's producer is affected; the worker
 * is another process with kafkajs as it is.
 */
async function withNullHeaderValues<T>(send: () => Promise<T>): Promise<T> {
  const byteLength = Buffer.byteLength;
  Buffer.byteLength = ((value: Parameters<typeof byteLength>[0], encoding?: BufferEncoding) =>
    value === null ? 0 : byteLength(value, encoding)) as typeof byteLength;
  try {
    return await send();
  } finally {
    Buffer.byteLength = byteLength;
  }
}

const size = (m: Message) =>
  (m.value?.length ?? 0) +
  (m.key?.length ?? 0) +
  Object.values(m.headers ?? {}).reduce<number>(
    (sum, v) => sum + [v].flat().reduce<number>((s, x) => s + (x?.length ?? 0), 0),
    0,
  );

/**
 * Headers as sorted [name, values in base64] pairs, for comparing what was sent with a dead
 * letter read back. Only Buffer and string values count: the README's rule leaves null values
 * out of the copy, and kafkajs's decoder leads a header named like an Object.prototype member
 * (`constructor`, `__proto__`) with the inherited member, on the reader's side too.
 */
function headersForm(headers: IHeaders | FuzzHeaders): [string, string][] {
  const form: [string, string][] = [];
  for (const name of Object.keys(headers)) {
    const value: unknown = headers[name];
    const values = (Array.isArray(value) ? value : [value]).filter(
      (v): v is Buffer | string => Buffer.isBuffer(v) || typeof v === 'string',
    );
    if (values.length > 0)
      form.push([name, values.map((v) => Buffer.from(v).toString('base64')).join(',')]);
  }
  return form.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

const bytes = (v: string | Buffer | null | undefined) =>
  v === null || v === undefined ? null : Buffer.from(v).toString('base64');

describe(`batch scorer fuzz: generated input through the real broker (seed ${SEED})`, () => {
  let topics: RankTopics;
  let bundles: string;
  let worker: BatchScorerProcess | undefined;
  const results: ReadRecord[] = [];
  const dead: ReadRecord[] = [];

  beforeAll(async () => {
    bundles = await mkdtemp(join(tmpdir(), 'batch-fuzz-'));
    await writeVersion(bundles, 'feed', 'v1', {
      edit: (yaml) => (yaml.models.ctr.batching = { maxQueueRows: LIMITS.queueRows }),
    });
    topics = await RankTopics.create('fuzz', { partitions: PARTITIONS });
    await topics.read(topics.output, (r) => results.push(r));
    await topics.read(topics.dlq, (r) => dead.push(r));
    worker = await BatchScorerProcess.start({
      ...topics.env(),
      BUNDLES_DIR: bundles,
      BUNDLES_POLL_INTERVAL_MS: '0',
      RANK_MAX_CANDIDATES: String(LIMITS.maxCandidates),
    });
  }, 120_000);

  afterAll(async () => {
    if (worker?.running) worker.kill('SIGTERM');
    await worker?.exited;
    await topics?.close();
    await rm(bundles, { recursive: true, force: true });
  });

  it('answers or dead-letters every message exactly once, as the README says, and never stalls', async () => {
    const ids = new RequestIds();
    const cases: FuzzCase[] = fc
      .sample(fuzzMessages(LIMITS), { seed: SEED, numRuns: MESSAGES })
      .map((make) => make(ids));
    const messages: Message[] = cases.map((c, n) => ({
      key: c.key,
      value: c.value,
      headers: { ...c.headers, [FUZZ_HEADER]: `m${n}` } as IHeaders,
      partition: n % PARTITIONS,
    }));
    // Where each message landed, from the offsets the broker gave each produce request.
    const where: { partition: number; offset: string }[] = [];
    await withNullHeaderValues(async () => {
      for (let at = 0; at < messages.length;) {
        let end = at + 1;
        for (let bytesSoFar = size(messages[at]); end < messages.length; end++) {
          bytesSoFar += size(messages[end]);
          if (bytesSoFar > SEND_BYTES) break;
        }
        const chunk = messages.slice(at, end);
        const acks = await topics.producer.send({ topic: topics.input, acks: -1, messages: chunk });
        const next = new Map(acks.map((a) => [a.partition, BigInt(a.baseOffset!)]));
        for (const m of chunk) {
          const offset = next.get(m.partition!)!;
          where.push({ partition: m.partition!, offset: String(offset) });
          next.set(m.partition!, offset + 1n);
        }
        at = end;
      }
    });

    const badOnes = cases.flatMap((c, n) => (c.dlq ? [n] : []));
    const answers = cases.flatMap((c) => (c.answer ? [c.answer] : []));
    await eventually(
      'every partition committed to its end',
      async () => {
        if (!worker!.running) throw new Error(`the worker died:\n${worker!.logText()}`);
        const { committed, end } = await topics.progress();
        return committed === end ? true : undefined;
      },
      60_000,
    ).catch((error: Error) => {
      const seen = `${dead.length}/${badOnes.length} dead letters, ${results.length}/${answers.length} results`;
      throw new Error(`${error.message} (${seen}); worker log:\n${worker!.logText().slice(-4000)}`);
    });
    // Records acknowledged before the commit may take a fetch to reach the readers; if some
    // never come, the comparisons below name them.
    await eventually(
      'every dead letter and result read back',
      () => (dead.length >= badOnes.length && results.length >= answers.length ? true : undefined),
      10_000,
    ).catch(() => undefined);
    expect(worker!.running).toBe(true);

    // The sample really mixes every kind of message in (the seed is fixed).
    const kinds = new Set(cases.map((c) => c.kind.split('/')[0]));
    expect([...kinds].sort()).toEqual(
      [
        'empty',
        'envelope',
        'field',
        'non-object',
        'not-json',
        'too-large',
        'unknown-scene',
        'valid',
      ].sort(),
    );

    // Dead letters: exactly the bad ones, once each, with the reason, the original and its origin.
    const fuzzId = (r: ReadRecord) => r.headers[FUZZ_HEADER];
    expect(dead.map(fuzzId).sort()).toEqual(badOnes.map((n) => `m${n}`).sort());
    const problems: string[] = [];
    for (const letter of dead) {
      const n = Number(fuzzId(letter).slice(1));
      const sent = cases[n];
      const why = letter.headers[DEAD_LETTER_HEADERS.reason];
      if (!sent.dlq!.test(why)) problems.push(`m${n} (${sent.kind}): reason ${why} !~ ${sent.dlq}`);
      const expected = headersForm({
        ...messages[n].headers!,
        [DEAD_LETTER_HEADERS.reason]: why,
        [DEAD_LETTER_HEADERS.topic]: topics.input,
        [DEAD_LETTER_HEADERS.partition]: String(where[n].partition),
        [DEAD_LETTER_HEADERS.offset]: where[n].offset,
      });
      const kept = headersForm(letter.rawHeaders);
      if (JSON.stringify(kept) !== JSON.stringify(expected))
        problems.push(
          `m${n} (${sent.kind}): headers ${JSON.stringify(kept).slice(0, 300)}, sent ${JSON.stringify(expected).slice(0, 300)}`,
        );
      if (bytes(letter.rawKey) !== bytes(sent.key)) problems.push(`m${n}: key differs`);
      if (bytes(letter.value) !== bytes(sent.value === '' ? Buffer.alloc(0) : sent.value))
        problems.push(`m${n}: value differs`);
    }
    expect(problems).toEqual([]);

    // Results: per requestId, the statuses, codes and paths the README's rules give, once each.
    const got = new Map<string, string[]>();
    for (const r of results) {
      const body = JSON.parse(r.value!.toString()) as {
        requestId: string;
        code?: string;
        details?: { path?: string }[];
        items?: unknown[];
      };
      const status = Number(r.headers['x-status']);
      const outcome =
        status === 200
          ? `200 ok${body.requestId === r.key && body.items!.length > 0 ? '' : ' (malformed)'}`
          : `${status} ${body.code} ${(body.details ?? []).map((d) => d.path).join(',')}`;
      got.set(r.key, [...(got.get(r.key) ?? []), outcome].sort());
    }
    const want = new Map<string, string[]>();
    for (const a of answers) {
      const outcome = a.status === 200 ? '200 ok' : `${a.status} ${a.code} ${a.path}`;
      want.set(a.requestId, [...(want.get(a.requestId) ?? []), outcome].sort());
    }
    const wrong = [...new Set([...got.keys(), ...want.keys()])].flatMap((id) =>
      JSON.stringify(got.get(id)) === JSON.stringify(want.get(id))
        ? []
        : [
            `${id.slice(0, 40)}: got ${JSON.stringify(got.get(id))}, want ${JSON.stringify(want.get(id))}`,
          ],
    );
    expect(wrong).toEqual([]);
    expect(results).toHaveLength(answers.length);
    expect(answers.filter((a) => a.status === 200).length).toBeGreaterThan(MESSAGES / 3);
    expect(badOnes.length).toBeGreaterThan(MESSAGES / 4);

    // Its own count agrees: every message handled once (503 retries are not requests).
    expect(await worker!.metric('ranker_batch_requests_total')).toBe(MESSAGES);
    // And it is still whole: SIGTERM drains it and it exits cleanly (Nest re-raises the signal).
    const exit = await worker!.stop();
    expect(exit.code === 0 || exit.signal === 'SIGTERM').toBe(true);
  }, 150_000);
});
