import { setFlagsFromString } from 'node:v8';
import { emptyItemMemos, FeatureRow } from '@app/features';
import { dryRunFrame } from './dry-run-frame';
import { goldenFrame } from './golden-check';
import { featureFrame, NO_ITEM_FEATURES, rowArray } from '../transforms/feature-frame';

setFlagsFromString('--allow-natives-syntax');
// Parsed after the flag is set: V8's own test of two objects sharing one hidden class.
const sameMap = new Function('a', 'b', 'return %HaveSameMap(a, b)') as (
  a: object,
  b: object,
) => boolean;

/** A frame as the rank path makes it, from what a store's fetch returns. */
function requestFrame(n: number) {
  const itemIds = new Array<string>(n);
  const itemStored = new Array<FeatureRow | undefined>(n);
  for (let r = 0; r < n; r++) {
    itemIds[r] = `i${r}`;
    itemStored[r] = r % 2 === 0 ? { category: 'c' } : undefined;
  }
  return featureFrame({
    userId: 'u1',
    userRequest: undefined,
    userStored: { age: 30 },
    context: { hour: 3 },
    itemIds,
    itemRequest: NO_ITEM_FEATURES,
    itemStored,
    itemHolders: new Array(n),
    itemMemos: emptyItemMemos(n),
    onBadValue: () => undefined,
  });
}

describe('featureFrame', () => {
  it('gives every frame one hidden class, and their per-row arrays one elements kind', () => {
    // The serving path is optimized for the frames it sees: a dry run's, a golden request's or a
    // shadow run's frame of another shape would deoptimize it while traffic runs.
    const served = requestFrame(5);
    const others = [
      dryRunFrame({ models: [] }, 5),
      goldenFrame({
        user: { id: 'u2', features: { age: 41 } },
        context: { hour: 4 },
        candidates: [{ id: 'a', features: { category: 'x' } }, { id: 'b' }],
      }),
      featureFrame({ ...served, onBadValue: undefined }),
    ];
    // The test itself tells shapes apart: a literal of the old dry run's seven fields does not pass.
    const { itemHolders, itemMemos, onBadValue, ...seven } = served;
    expect([itemHolders, itemMemos, onBadValue]).not.toContain(null);
    expect(sameMap({ ...seven }, served)).toBe(false);
    expect(sameMap(['a', 'b'], served.itemIds)).toBe(false);
    for (const frame of others) {
      expect(sameMap(frame, served)).toBe(true);
      expect(sameMap(frame.itemIds, served.itemIds)).toBe(true);
      expect(sameMap(frame.itemStored, served.itemStored)).toBe(true);
    }
    const golden = others[1];
    expect(golden.itemRequest).toEqual([{ category: 'x' }, undefined]);
    expect(golden.itemIds).toEqual(['a', 'b']);
  });

  it('keeps every field it is given and leaves the others undefined', () => {
    const served = requestFrame(3);
    expect(featureFrame(served)).toEqual(served);
    const bare = featureFrame({
      userId: 'u',
      userRequest: undefined,
      userStored: undefined,
      context: undefined,
      itemIds: ['a'],
      itemRequest: NO_ITEM_FEATURES,
      itemStored: [undefined],
    });
    expect(Object.keys(bare)).toEqual(Object.keys(served));
    expect(bare.itemHolders).toBeUndefined();
    expect(bare.itemMemos).toBeUndefined();
    expect(bare.onBadValue).toBeUndefined();
  });

  it('rowArray writes each row by index', () => {
    expect(rowArray(3, (r) => r * 2)).toEqual([0, 2, 4]);
    expect(rowArray(0, () => 1)).toEqual([]);
  });
});
