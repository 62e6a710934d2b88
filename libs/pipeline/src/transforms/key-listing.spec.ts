import { KeyListing } from './key-listing';

const texts = ['a', 'b', 'c', 'd'];

/** Rows whose key codes sit one per cell: row r's code is codes[r]. */
function listed(listing: KeyListing, codes: number[], own?: (string[] | undefined)[]) {
  const at = Int32Array.from(codes, (_, r) => r);
  return listing.list(0, listing.next(), at, Int32Array.from(codes), 0, texts, own as never);
}

describe('KeyListing', () => {
  it('lists each distinct code once, in first-seen order, with each row indexed into the list', () => {
    const listing = new KeyListing();
    listing.reset(1);
    const { distinct, index } = listed(listing, [2, 0, 2, 1, 0]);
    expect(distinct).toEqual(['c', 'a', 'b']);
    expect(Array.from(index)).toEqual([0, 1, 0, 2, 1]);
    // The next request's listing starts empty.
    expect(listed(listing, [1, 1]).distinct).toEqual(['b']);
  });

  it("lists a request's own rows by their strings, beside the kept rows' codes", () => {
    const listing = new KeyListing();
    listing.reset(1);
    const { distinct, index } = listed(listing, [0, 0, 1, 0], [undefined, ['x'], undefined, ['x']]);
    expect(distinct).toEqual(['a', 'x', 'b']);
    expect(Array.from(index)).toEqual([0, 1, 2, 1]);
  });

  it('stays right when serials start over and when the tables grow', () => {
    const listing = new KeyListing();
    listing.reset(1);
    listed(listing, [3]);
    (listing as unknown as { serial: number }).serial = 0x7fffffff - 1;
    for (let request = 0; request < 3; request++)
      expect(listed(listing, [3, 0, 3]).distinct).toEqual(['d', 'a']);
    // Codes are handed out one after another, each fitted as it comes.
    for (let code = 0; code <= 5000; code++) listing.fit(code);
    const many = Array.from({ length: 5001 }, (_, i) => `k${i}`);
    const at = Int32Array.of(0, 1);
    const got = listing.list(0, listing.next(), at, Int32Array.of(5000, 5000), 0, many, undefined);
    expect(got.distinct).toEqual(['k5000']);
  });
});
