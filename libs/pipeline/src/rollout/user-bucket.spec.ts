import { UserBuckets } from './user-bucket';

describe('UserBuckets', () => {
  // The same buckets as the README's Python reference, so analysis jobs outside Ranker can
  // assign users exactly as it does: fmix32(fnv1a32(f"{salt}:{user_id}".encode())) % 10000.
  it.each([
    ['fusion-weights-2024-06', 'u1', 9878],
    ['fusion-weights-2024-06', 'u2', 5297],
    ['canary:v2', 'u1', 9872],
    ['shadow:v5', 'user-00000042', 9044],
    ['s', 'é😀', 2357],
  ])('puts user %s/%s in bucket %d', (salt, userId, bucket) => {
    expect(new UserBuckets(salt).bucketOf(userId)).toBe(bucket);
  });
});
