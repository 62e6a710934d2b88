/**
 * `promise`, or a rejection (`no answer within <ms> ms`) once `ms` have passed first; the timer
 * is cleared as soon as either settles. The promise itself runs on: a late answer is not lost to
 * whoever else holds it.
 */
export function rejectAfter<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
