import { setFlagsFromString } from 'node:v8';

/**
 * V8 flags for a process that serves rank requests, each of which allocates short-lived lists of
 * thousands of entries (a 3,000-candidate request: ~430 kB, most of it its candidates, their ids
 * and the per-row arrays of its fetch):
 * - `--no-allocation-site-pretenuring`: V8 otherwise learns that these lists' allocation sites
 *   survive (a request's lists are alive at the scavenge that comes while it runs) and allocates
 *   them straight in the old generation, where they die a few milliseconds later and wait for a
 *   mark-compact, holding the young objects they point to alive through every scavenge till then;
 * - `--heap-growing-percent=100`: with the requests' garbage kept young, the old generation stays
 *   small and V8 sets its next limit close above it, so a few megabytes of growth started a
 *   mark-compact every ~1.5 s (~170 ms of concurrent marking each); twice the live size leaves
 *   room for minutes of it.
 * Together with the rank path dropping its per-row lists as a request ends (RankService), GC took
 * ~0.6 ms of CPU per 3,000-candidate request instead of 2.1-2.3 (test/bench/RESULTS.md:
 * bench:rank, 2026-12-04 evening). Either flag alone did not help. Call it once, at the start of
 * a serving process.
 */
export const GC_TUNING_FLAGS = ['--no-allocation-site-pretenuring', '--heap-growing-percent=100'];

export function tuneGarbageCollector(): void {
  for (const flag of GC_TUNING_FLAGS) setFlagsFromString(flag);
}
