const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/**
 * A faster JSON.parse of a request body for the shape of a large rank request: a
 * top-level `candidates` array of `{"id": "..."}` objects. V8 interns every string value of at
 * most 10 characters that JSON.parse makes (a lookup in the isolate's string table, scattered
 * over memory), and item ids are mostly that short: for 3,000 candidates that lookup cost more
 * than the rest of the parse. Here the array is read by a scanner that makes each id with
 * String.prototype.slice, and the rest of the body (the array replaced by `[]`) by JSON.parse.
 *
 * The result is always what JSON.parse(text) gives (or JSON.parse's own error): the scanner
 * accepts only text whose meaning it knows exactly, and gives up for anything else: a key at the
 * top level with an escape in it, `candidates` twice, a candidate with any other member, an id
 * with an escape or a control character, or anything unexpected. Giving up costs one scan of the
 * text up to that point; the caller then parses the whole body as before (parseRankBody below,
 * the ranker's Fastify parser).
 *
 * `{ value }` when the fast path applies, undefined when JSON.parse must read the text.
 */
export function fastParse(text: string): { value: unknown } | undefined {
  let i = skipSpace(text, 0);
  if (text.charCodeAt(i) !== LBRACE) return undefined;
  const length = text.length;
  let depth = 0;
  /** At depth 1, the next string is a key (after `{` or `,`). */
  let expectKey = false;
  /** The key just read at depth 1 was `candidates`: its value comes next. */
  let pending = false;
  let span: { start: number; end: number; candidates: { id: string }[] } | undefined;
  while (i < length) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      const end = stringEnd(text, i);
      if (end < 0) return undefined;
      if (depth === 1 && expectKey) {
        const key = text.slice(i + 1, end - 1);
        // An escaped key may spell `candidates` (or anything): JSON.parse decides.
        if (key.includes('\\')) return undefined;
        if (key === 'candidates') {
          if (span !== undefined) return undefined;
          pending = true;
        }
        expectKey = false;
      } else if (pending) return undefined;
      i = end;
      continue;
    }
    if (pending && c === LBRACKET) {
      const scanned = scanCandidates(text, i);
      if (scanned === undefined) return undefined;
      span = { start: i, end: scanned.end, candidates: scanned.candidates };
      pending = false;
      i = scanned.end;
      continue;
    }
    if (c === LBRACE || c === LBRACKET) {
      if (pending) return undefined;
      depth++;
      expectKey = depth === 1;
    } else if (c === RBRACE || c === RBRACKET) {
      if (pending) return undefined;
      depth--;
    } else if (c === COMMA) {
      if (pending) return undefined;
      if (depth === 1) expectKey = true;
    } else if (pending && c !== COLON && !isSpace(c)) return undefined;
    i++;
  }
  if (span === undefined) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(`${text.slice(0, span.start)}[]${text.slice(span.end)}`);
  } catch {
    return undefined;
  }
  (value as { candidates: unknown }).candidates = span.candidates;
  return { value };
}

/** JSON.parse(text), by the fast path where it applies: same value, same errors. */
export function parseRankBody(text: string): unknown {
  const fast = fastParse(text);
  return fast === undefined ? JSON.parse(text) : fast.value;
}

/**
 * The candidate lists scanCandidates made: each holds `{ id }` objects alone, each id a string,
 * so the validation checks their ids and nothing else (see isScannedList).
 */
const scannedLists = new WeakSet<object>();

/**
 * Whether `list` is a candidate list this parser made, untouched since: every element a plain
 * object whose only own property is `id`, a string. The validation of a rank request runs on the
 * parsed body before anything else sees it, so such a list needs its ids checked, not its shape.
 */
export function isScannedList(list: unknown[]): boolean {
  return scannedLists.has(list);
}

/**
 * Candidates an array is made for at once: beyond that it grows as written (a body whose other
 * fields are large must not buy a huge array, nor one V8 would keep as a dictionary).
 */
const MAX_PREALLOCATED = 16_384;

/**
 * Reads `[{"id":"..."}, ...]` from `start` (a `[`), allowing JSON whitespace between tokens.
 * The candidates and the index after the `]`; undefined for anything else. The array is made
 * once, as long as the rest of the text could hold (`{"id":""},` is 10 characters; at most
 * MAX_PREALLOCATED) and cut to length at the end: grown by push, a 3,000-candidate list was
 * reallocated a dozen times.
 */
function scanCandidates(
  text: string,
  start: number,
): { candidates: { id: string }[]; end: number } | undefined {
  const room = Math.floor((text.length - start) / 10) + 1;
  const candidates = new Array<{ id: string }>(Math.min(room, MAX_PREALLOCATED));
  let n = 0;
  const done = (end: number) => {
    candidates.length = n;
    scannedLists.add(candidates);
    return { candidates, end };
  };
  let i = skipSpace(text, start + 1);
  if (text.charCodeAt(i) === RBRACKET) return done(i + 1);
  for (;;) {
    if (text.charCodeAt(i) !== LBRACE) return undefined;
    i = skipSpace(text, i + 1);
    if (!text.startsWith('"id"', i)) return undefined;
    i = skipSpace(text, i + 4);
    if (text.charCodeAt(i) !== COLON) return undefined;
    i = skipSpace(text, i + 1);
    if (text.charCodeAt(i) !== QUOTE) return undefined;
    const from = i + 1;
    let j = from;
    for (;;) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) break;
      // An escape, a control character (JSON.parse refuses it) or the end of the text.
      if (c === BACKSLASH || c < 0x20 || Number.isNaN(c)) return undefined;
      j++;
    }
    candidates[n++] = { id: text.slice(from, j) };
    i = skipSpace(text, j + 1);
    if (text.charCodeAt(i) !== RBRACE) return undefined;
    i = skipSpace(text, i + 1);
    const c = text.charCodeAt(i);
    if (c === RBRACKET) return done(i + 1);
    if (c !== COMMA) return undefined;
    i = skipSpace(text, i + 1);
  }
}

/** The index after the string starting at `start` (a quote); -1 when it does not end. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) return i + 1;
    if (c === BACKSLASH) i++;
  }
  return -1;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

function skipSpace(text: string, from: number): number {
  let i = from;
  while (isSpace(text.charCodeAt(i))) i++;
  return i;
}
