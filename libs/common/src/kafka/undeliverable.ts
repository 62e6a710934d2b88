/**
 * Broker answers (kafkajs protocol error types) that no retry can change for this record: the
 * record itself is refused, e.g. larger than the topic's `max.message.bytes`.
 */
const UNDELIVERABLE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE', 'INVALID_RECORD']);

/** The kafkajs protocol error type if `error` (or what it wraps) is a refusal for good. */
export function undeliverableType(error: unknown): string | undefined {
  const seen = new Set<unknown>();
  const queue: unknown[] = [error];
  while (queue.length > 0) {
    const current = queue.shift();
    if (current === null || typeof current !== 'object' || seen.has(current)) continue;
    seen.add(current);
    const { type, cause, originalError, errors } = current as {
      type?: unknown;
      cause?: unknown;
      originalError?: unknown;
      errors?: unknown;
    };
    if (typeof type === 'string' && UNDELIVERABLE.has(type)) return type;
    queue.push(cause, originalError, ...(Array.isArray(errors) ? errors : []));
  }
  return undefined;
}

/**
 * Sends `records` in one go. When the broker refuses some record for good, retrying the whole
 * send would fail for ever (and stall whatever waits on it), so each record is then sent alone,
 * and each one still refused goes to `refused`, which may return a replacement to send in its
 * place (once; a refused replacement is handed to `refused` again, whose answer is then ignored).
 * Any other failure (broker down, timeouts, authorization) is thrown: the caller retries.
 * Resolves with the number of records the broker took.
 */
export async function sendSkippingUndeliverable<R>(
  send: (records: R[]) => Promise<void>,
  records: R[],
  refused: (record: R, type: string, error: Error) => R | undefined,
): Promise<number> {
  try {
    await send(records);
    return records.length;
  } catch (error) {
    if (undeliverableType(error) === undefined) throw error;
  }
  // Some record cannot be delivered: find which, one at a time (rare, so sequential).
  let delivered = 0;
  for (const record of records) {
    const replacement = await sendAlone(send, record, refused);
    if (replacement === undefined) {
      delivered++;
      continue;
    }
    if (replacement === null) continue;
    if ((await sendAlone(send, replacement, refused)) === undefined) delivered++;
  }
  return delivered;
}

/** undefined: sent; null: refused with no replacement; else the replacement to send. */
async function sendAlone<R>(
  send: (records: R[]) => Promise<void>,
  record: R,
  refused: (record: R, type: string, error: Error) => R | undefined,
): Promise<R | null | undefined> {
  try {
    await send([record]);
    return undefined;
  } catch (error) {
    const type = undeliverableType(error);
    if (type === undefined) throw error;
    return refused(record, type, error as Error) ?? null;
  }
}
