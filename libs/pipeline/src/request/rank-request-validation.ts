import { describeDetails, ErrorDetail, RequestInvalidError } from '@app/common';
import { isFeatureValue } from '@app/features';
import { DuplicateIds } from './duplicate-ids';
import { isScannedList } from './rank-body-json';
import { MAX_ID_LENGTH, MAX_TIMEOUT_MS, RankRequest } from './rank-request';

/** Enough to fix a request; a list of thousands of errors helps nobody. */
export const MAX_REQUEST_DETAILS = 50;

/** A key from outside is shown in a path up to this length; a 1 MB key is not echoed back. */
const MAX_KEY_SHOWN = 64;
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

type Json = Record<string, unknown>;

/** The candidate ids seen so far, for the request being validated (one at a time per thread). */
const duplicates = new DuplicateIds();

/**
 * The one validation of a rank request, shared by the HTTP edge, the Kafka edge and the golden
 * check. Hand-written and single pass, on purpose:
 * - the body is flat (objects of known keys, flat feature maps), so nothing here recurses: a
 *   value nested deeper than the contract allows is refused at its path without being
 *   visited, whatever its depth;
 * - names from outside are only ever read as own properties (`constructor`, `toString` and
 *   `__proto__` are ordinary feature names; as fields they are unknown and refused);
 * - 3,000 candidates cost one loop and one probe of a reused id table each (DuplicateIds), no
 *   class instances on the event loop.
 * Every problem is reported with its path (at most MAX_REQUEST_DETAILS); on success the body
 * itself is returned, typed, since it then has exactly the contract's shape.
 */
export function validateRankRequest(body: unknown, maxCandidates: number): RankRequest {
  if (!isObject(body)) {
    throw new RequestInvalidError('the body must be a JSON object', [
      { path: 'body', message: 'must be a JSON object' },
    ]);
  }
  const details: ErrorDetail[] = [];
  for (const key in body) {
    if (!Object.hasOwn(body, key)) continue;
    if (details.length >= MAX_REQUEST_DETAILS) break;
    const value = body[key];
    switch (key) {
      case 'user':
        checkUser(value, details);
        break;
      case 'context':
        checkFeatureMap(value, 'context', 'context', details);
        break;
      case 'candidates':
        checkCandidates(value, maxCandidates, details);
        break;
      case 'topK':
        if (!(Number.isInteger(value) && (value as number) >= 1))
          add(details, 'topK', 'must be an integer >= 1');
        break;
      case 'timeoutMs':
        if (!(
          Number.isInteger(value) &&
          (value as number) >= 1 &&
          (value as number) <= MAX_TIMEOUT_MS
        ))
          add(details, 'timeoutMs', `must be an integer from 1 to ${MAX_TIMEOUT_MS}`);
        break;
      default:
        add(details, fieldPath('', key), 'property should not exist');
    }
  }
  if (!Object.hasOwn(body, 'user'))
    add(details, 'user', 'is required: an object { id, features? }');
  if (!Object.hasOwn(body, 'candidates'))
    add(details, 'candidates', 'must be an array of { id, features? }');
  if (details.length > 0) throw requestInvalid(details);
  return body as unknown as RankRequest;
}

/** The error for `details`, its message summing up the first few (as every edge reports it). */
export function requestInvalid(details: ErrorDetail[]): RequestInvalidError {
  return new RequestInvalidError(`invalid request: ${summary(details)}`, details);
}

function checkUser(user: unknown, details: ErrorDetail[]): void {
  if (!isObject(user)) {
    add(details, 'user', 'must be an object { id, features? }');
    return;
  }
  for (const key in user) {
    if (Object.hasOwn(user, key) && key !== 'id' && key !== 'features')
      add(details, fieldPath('user', key), 'property should not exist');
  }
  if (!isId(Object.hasOwn(user, 'id') ? user.id : undefined))
    add(details, 'user.id', `must be a non-empty string of at most ${MAX_ID_LENGTH} characters`);
  if (Object.hasOwn(user, 'features'))
    checkFeatureMap(user.features, 'user.features', 'features', details);
}

/**
 * A candidate list: a non-empty array within the limit (checked before anything else, so an
 * oversized list costs nothing more), of `{ id, features? }` with unique ids. One loop over them
 * (ids checked for repeats in DuplicateIds); it stops once MAX_REQUEST_DETAILS problems are known.
 */
function checkCandidates(candidates: unknown, max: number, details: ErrorDetail[]): void {
  if (!Array.isArray(candidates)) {
    add(details, 'candidates', 'must be an array of { id, features? }');
    return;
  }
  if (candidates.length === 0) {
    add(details, 'candidates', 'must not be empty');
    return;
  }
  if (candidates.length > max) {
    add(details, 'candidates', `at most ${max} candidates per request, got ${candidates.length}`);
    return;
  }
  duplicates.start(candidates.length);
  const idAt = (j: number) => (candidates[j] as Json).id as string;
  if (isScannedList(candidates)) {
    checkScannedIds(candidates as { id: string }[], idAt, details);
    return;
  }
  for (let i = 0; i < candidates.length && details.length < MAX_REQUEST_DETAILS; i++) {
    const candidate: unknown = candidates[i];
    if (!isObject(candidate)) {
      add(details, `candidates[${i}]`, 'must be an object { id, features? }');
      continue;
    }
    for (const key in candidate) {
      if (Object.hasOwn(candidate, key) && key !== 'id' && key !== 'features')
        add(details, fieldPath(`candidates[${i}]`, key), 'property should not exist');
    }
    checkCandidateId(Object.hasOwn(candidate, 'id') ? candidate.id : undefined, i, idAt, details);
    if (Object.hasOwn(candidate, 'features'))
      checkFeatureMap(candidate.features, `candidates[${i}].features`, 'features', details);
  }
}

/**
 * The ids of a list the body parser made (isScannedList): `{ id }` objects with string ids, so only
 * the ids themselves are checked, as checkCandidates checks them.
 */
function checkScannedIds(
  candidates: readonly { id: string }[],
  idAt: (j: number) => string,
  details: ErrorDetail[],
): void {
  for (let i = 0; i < candidates.length && details.length < MAX_REQUEST_DETAILS; i++)
    checkCandidateId(candidates[i].id, i, idAt, details);
}

/** Candidate `i`'s id: a non-empty string within MAX_ID_LENGTH, not an earlier candidate's. */
function checkCandidateId(
  id: unknown,
  i: number,
  idAt: (j: number) => string,
  details: ErrorDetail[],
): void {
  if (!isId(id)) {
    add(
      details,
      `candidates[${i}].id`,
      `must be a non-empty string of at most ${MAX_ID_LENGTH} characters`,
    );
    return;
  }
  const first = duplicates.firstIndex(id, i, idAt);
  if (first >= 0)
    add(details, `candidates[${i}].id`, `duplicate id '${id}' (first at candidates[${first}])`);
}

/** A flat map of feature name to string, finite number or boolean; the first bad entry is named. */
function checkFeatureMap(map: unknown, path: string, label: string, details: ErrorDetail[]): void {
  if (!isObject(map)) {
    add(details, path, `${label} must be an object of features`);
    return;
  }
  for (const name in map) {
    if (Object.hasOwn(map, name) && !isFeatureValue(map[name])) {
      add(details, path, `${label} ${keySegment(name)} must be a string, finite number or boolean`);
      return;
    }
  }
}

/** A JSON object: plain (or null-prototype), never an array, a Map, a boxed value or a Date. */
function isObject(value: unknown): value is Json {
  if (value === null || typeof value !== 'object') return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

function isId(value: unknown): value is string {
  return typeof value === 'string' && value !== '' && value.length <= MAX_ID_LENGTH;
}

function add(details: ErrorDetail[], path: string, message: string): void {
  if (details.length < MAX_REQUEST_DETAILS) details.push({ path, message });
}

/** `.name` for a plain name, `["odd name"]` (JSON-quoted, shortened) for anything else. */
export function keySegment(key: string): string {
  if (key.length <= MAX_KEY_SHOWN && IDENTIFIER.test(key)) return `.${key}`;
  return `[${JSON.stringify(shown(key))}]`;
}

/** The path of `key` under `parent`; a top-level key that is no plain name hangs off `body`. */
function fieldPath(parent: string, key: string): string {
  const segment = keySegment(key);
  if (parent !== '') return parent + segment;
  return segment.startsWith('.') ? segment.slice(1) : `body${segment}`;
}

function shown(text: string): string {
  return text.length <= MAX_KEY_SHOWN ? text : `${text.slice(0, MAX_KEY_SHOWN)}…`;
}

/** The first few problems, for the message; `details` has them all. */
function summary(details: readonly ErrorDetail[]): string {
  return describeDetails(details.slice(0, 5));
}
