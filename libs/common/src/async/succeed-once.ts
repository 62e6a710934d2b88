/** Runs `fn` until it succeeds once; later calls then resolve at once (a failure is tried again). */
export function succeedOnce(fn: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () =>
    (done ??= fn().catch((error: unknown) => {
      done = undefined;
      throw error;
    }));
}
