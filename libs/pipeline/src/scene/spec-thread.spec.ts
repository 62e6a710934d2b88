/**
 * pipeline.yaml is read in a child process: the serving thread keeps running while a large file
 * is parsed, and a reading that takes too long or too much memory is a refusal, not a crash.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { eventually } from '../../../../test/support/eventually';
import { procStatFields, threadCpu } from '../../../../test/support/proc-stat';
import { GOLDEN_PART_CANDIDATES } from './golden-parts';
import {
  readGoldenOffThread,
  readSpecOffThread,
  SPEC_READ_LIMITS,
  SPEC_READER_NICE,
} from './spec-thread';

const EXAMPLE = readFileSync(join(__dirname, '../../../../models/feed/v1/pipeline.yaml'), 'utf8');

/** About `bytes` of valid YAML: the example's head and a long list of feature declarations. */
function largeYaml(bytes: number): string {
  const lines = ['scene: feed', 'version: v1', 'features:', '  user:'];
  let length = 0;
  for (let i = 0; length < bytes; i++) {
    const line = `    f${i}: { type: number, default: ${i} }`;
    lines.push(line);
    length += line.length + 1;
  }
  return lines.join('\n');
}

describe('readSpecOffThread', () => {
  it('reads the example bundle into the same spec as ever', async () => {
    const read = await readSpecOffThread(EXAMPLE);
    expect(read.ok).toBe(true);
    if (!read.ok) return;
    expect(read.reading.errors).toEqual([]);
    expect(read.reading.spec.models.map((m) => m.name)).toEqual(['ctr', 'mtl']);
    expect(read.reading.spec.fusion).toContain('ctr.ctr');
  });

  it('reads in a child process whose every thread runs at SPEC_READER_NICE, not in this one', async () => {
    const before = threadsOf(process.pid);
    expect((await readSpecOffThread(EXAMPLE)).ok).toBe(true);
    // One reader per set of limits (and, in a test process, per test file that read a bundle).
    const readers = readersOf(process.pid);
    expect(readers.length).toBeGreaterThanOrEqual(1);
    for (const reader of readers) {
      const nices = threadsOf(reader).map(({ nice }) => nice);
      // The main thread, V8's platform threads (the parser's compiler) and libuv's, all lowered.
      expect(nices.length).toBeGreaterThan(4);
      expect(new Set(nices)).toEqual(new Set([SPEC_READER_NICE]));
    }
    // Nothing of this process was lowered by it.
    const after = new Map(threadsOf(process.pid).map(({ tid, nice }) => [tid, nice]));
    for (const { tid, nice } of before) if (after.has(tid)) expect(after.get(tid)).toBe(nice);
  });

  it('lets an idle reader go, and starts a new one for the next question', async () => {
    const limits = { ...SPEC_READ_LIMITS, idleMs: 200 };
    const others = new Set(readersOf(process.pid));
    expect((await readSpecOffThread(EXAMPLE, limits)).ok).toBe(true);
    const mine = readersOf(process.pid).filter((pid) => !others.has(pid));
    expect(mine).toHaveLength(1);
    await eventually(
      'the idle reader gone',
      () => (readersOf(process.pid).includes(mine[0]) ? undefined : true),
      10_000,
    );
    expect((await readSpecOffThread(EXAMPLE, limits)).ok).toBe(true);
  });

  it('names the line of a YAML syntax error', async () => {
    const read = await readSpecOffThread(`${EXAMPLE}\nbroken: [unclosed\n`);
    expect(read.ok).toBe(false);
    if (read.ok) return;
    for (const e of read.errors) expect(e.path).toMatch(/^pipeline\.yaml:\d+$/);
  });

  it('keeps the calling thread serving while a 256 KB file is parsed', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    // 256 KB: 1 MB took 4 s on one machine and 12 s on another, near the 30 s limit under load.
    const read = await readSpecOffThread(largeYaml(1 << 18));
    clearInterval(timer);
    expect(read.ok).toBe(true);
    if (read.ok) expect(read.reading.errors.map((e) => e.path)).toEqual(['models', 'fusion']);
    // The parse takes seconds here; on the calling thread no timer could have fired meanwhile.
    expect(ticks).toBeGreaterThan(50);
  });

  it('refuses a file not read within its time limit, naming pipeline.yaml', async () => {
    const read = await readSpecOffThread(largeYaml(1 << 20), {
      ...SPEC_READ_LIMITS,
      timeoutMs: 50,
    });
    expect(read).toEqual({
      ok: false,
      errors: [{ path: 'pipeline.yaml', message: 'not read within 50 ms; abandoned' }],
    });
  });

  it('refuses a file whose reading runs out of memory, and the process lives on', async () => {
    const read = await readSpecOffThread(largeYaml(1 << 20), {
      ...SPEC_READ_LIMITS,
      timeoutMs: 60_000,
      maxOldGenerationSizeMb: 8,
    });
    expect(read.ok).toBe(false);
    if (!read.ok)
      expect(read.errors).toEqual([
        {
          path: 'pipeline.yaml',
          message: 'could not be read: its reader ran out of memory (8 MB)',
        },
      ]);
  });
});

describe('readGoldenOffThread', () => {
  /** One golden line of `n` candidates with features (~190 bytes each). */
  const bigLine = (n: number) =>
    JSON.stringify({
      user: { id: 'u1', features: { age: 25, gender: 'f', city: 'c21' } },
      context: { hour: 20, device: 'ios' },
      candidates: Array.from({ length: n }, (_, c) => ({
        id: `i${c}`,
        features: { category: `cat${c % 40}`, brand: `b${c % 200}`, price: c / 7, tags: 't1|t2' },
      })),
      expected: Array.from({ length: n }, (_, c) => c / n),
    });

  it('parses a line of megabytes in the reader process and hands it over a part at a time', async () => {
    const n = 40_000;
    const text = `${bigLine(n)}\n`;
    expect(text.length).toBeGreaterThan(4 << 20);
    let ticks = 0;
    const timer = setInterval(() => ticks++, 5);
    const parts = readGoldenOffThread(Buffer.from(text));
    const first = await parts.next();
    // JSON.parse and validation of the line took the reader ~100 ms or more; the calling
    // thread's timers kept firing meanwhile.
    const ticksBeforeFirst = ticks;
    let candidates = 0;
    let count = 0;
    for (let part = first; part; part = await parts.next()) {
      if ('error' in part) throw new Error(part.error);
      expect(part.offset).toBe(candidates);
      expect(part.candidates.length).toBeLessThanOrEqual(GOLDEN_PART_CANDIDATES);
      expect(part.expected[0]).toBe(part.offset / n);
      candidates += part.candidates.length;
      count++;
    }
    clearInterval(timer);
    expect(candidates).toBe(n);
    expect(count).toBe(Math.ceil(n / GOLDEN_PART_CANDIDATES));
    expect(ticksBeforeFirst).toBeGreaterThan(5);
  });

  it('ends with a part at line 0 when a line is not read within its time limit', async () => {
    const parts = readGoldenOffThread(Buffer.from(`${bigLine(40_000)}\n`), {
      ...SPEC_READ_LIMITS,
      timeoutMs: 20,
    });
    expect(await parts.next()).toEqual({ line: 0, error: 'not read within 20 ms; abandoned' });
    expect(await parts.next()).toBeUndefined();
  });

  it('keeps its reader between the parts of a reading, however long the caller takes', async () => {
    const limits = { ...SPEC_READ_LIMITS, idleMs: 50 };
    const parts = readGoldenOffThread(Buffer.from(`${bigLine(2000)}\n`), limits);
    let candidates = 0;
    for (let part = await parts.next(); part; part = await parts.next()) {
      if ('error' in part) throw new Error(part.error);
      candidates += part.candidates.length;
      // Longer than idleMs between parts: the reader must still hold the rest of the line.
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    expect(candidates).toBe(2000);
  });

  it('a reading closed halfway leaves the reader answering the next one', async () => {
    const text = `${bigLine(2000)}\n${bigLine(3)}\n`;
    const first = readGoldenOffThread(Buffer.from(text));
    expect(await first.next()).toMatchObject({ line: 1, offset: 0 });
    first.close();
    expect(await first.next()).toBeUndefined();
    const spec = await readSpecOffThread(EXAMPLE);
    expect(spec.ok).toBe(true);
    const second = readGoldenOffThread(Buffer.from(text));
    const lines: number[] = [];
    for (let part = await second.next(); part; part = await second.next()) lines.push(part.line);
    expect(lines).toEqual([1, 1, 1, 1, 2]);
  });
});

function readersOf(pid: number): number[] {
  return childrenOf(pid).filter((child) => {
    try {
      return readFileSync(`/proc/${child}/cmdline`, 'utf8').includes('spec-worker');
    } catch {
      return false;
    }
  });
}

function childrenOf(pid: number): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        return Number(procStatFields(`/proc/${name}/stat`)(4)) === pid;
      } catch {
        return false;
      }
    })
    .map(Number);
}

function threadsOf(pid: number): { tid: number; nice: number }[] {
  return [...threadCpu(pid)].map(([tid, { nice }]) => ({ tid, nice }));
}
