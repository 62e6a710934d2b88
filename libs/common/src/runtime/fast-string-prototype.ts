/**
 * Puts `String.prototype` back into V8's fast mode. Defining a class that extends `String` turns
 * the prototype into a dictionary-mode object, and ioredis 6 defines one when it loads
 * (`VerbatimString` in `ioredis/built/resp/verbatim-string.js`, for RESP3 verbatim strings). From
 * then on, optimized code reaches every string method (`charCodeAt`, `slice`, `startsWith`, ...)
 * through a generic inline-cache call instead of a constant: in a process that had loaded ioredis,
 * the rank body's candidate scanner ran 3.6x slower (222 against 61 ns a candidate) and `fnv1a32`
 * 3x slower (100 against 35 ns an id). A property store on an instance of a `String` subclass
 * makes V8 optimize that instance's prototype chain for fast lookups again, `String.prototype`
 * included.
 *
 * Call it once every module is loaded and before the serving path runs: code optimized while the
 * prototype was slow keeps its generic calls until V8 optimizes it again. Calling it again is
 * harmless.
 */
export function restoreFastStringPrototype(): void {
  class StringPrototypeProbe extends String {}
  (new StringPrototypeProbe('') as unknown as { probed: boolean }).probed = true;
}
