import { BundleInvalidError } from '@app/common';
import { constants } from 'node:fs';
import { open, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, sep } from 'node:path';

/** How large a bundle's files may be; each is checked before anything is read. */
export interface BundleLimits {
  /** pipeline.yaml (BUNDLES_MAX_YAML_BYTES). */
  maxYamlBytes: number;
  /** golden.jsonl (BUNDLES_MAX_GOLDEN_BYTES). */
  maxGoldenBytes: number;
  /** Each .onnx file (BUNDLES_MAX_MODEL_BYTES). */
  maxModelBytes: number;
}

export const DEFAULT_BUNDLE_LIMITS: BundleLimits = {
  maxYamlBytes: 1024 * 1024,
  maxGoldenBytes: 16 * 1024 * 1024,
  maxModelBytes: 512 * 1024 * 1024,
};

/** A model file the engine may open, or why it may not. */
export type ModelFileCheck = { file: string } | { problem: string };

/**
 * The files of one bundle version as untrusted input: each must be a regular file whose real path
 * (symlinks followed) stays inside the bundles root, and no larger than its limit. A file over its
 * limit is refused from its size alone, never read; a FIFO or device is refused without blocking.
 */
export class BundleFiles {
  constructor(
    readonly dir: string,
    /** BUNDLES_DIR; by default the folder above the scene folder. */
    readonly root: string = dirname(dirname(dir)),
    readonly limits: BundleLimits = DEFAULT_BUNDLE_LIMITS,
  ) {}

  /** Refuses a version folder that is itself a link out of the root. */
  async checkFolder(): Promise<void> {
    const outside = await this.outsideRoot(this.dir);
    if (outside) throw this.invalid('', `the version folder ${outside}`);
  }

  /**
   * The text of `name`, undefined if it does not exist. Throws BundleInvalidError naming `name`
   * if it leaves the root, is not a regular file, or is larger than `maxBytes` (named `setting`).
   */
  async readText(name: string, maxBytes: number, setting: string): Promise<string | undefined> {
    return (await this.readBytes(name, maxBytes, setting))?.toString('utf8');
  }

  /**
   * The bytes of `name`, checked as readText checks them: a view at offset 0 of an ArrayBuffer of
   * its own, which the caller may transfer to another thread (decoding megabytes of UTF-8 took
   * ~35 ms of the serving thread, copying the text to a thread ~20 ms more).
   */
  async readBytes(name: string, maxBytes: number, setting: string): Promise<Buffer | undefined> {
    const path = join(this.dir, name);
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      return undefined;
    }
    const outside = await this.outsideRoot(path, real);
    if (outside) throw this.invalid(name, outside);
    // O_NONBLOCK: opening a FIFO would otherwise wait for a writer forever.
    const handle = await open(real, constants.O_RDONLY | constants.O_NONBLOCK).catch(() => {
      throw this.invalid(name, 'cannot be opened');
    });
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw this.invalid(name, 'not a regular file');
      if (info.size > maxBytes) throw this.invalid(name, tooLarge(info.size, maxBytes, setting));
      // Read at most one byte past the limit, so a file growing meanwhile is refused too.
      const buffer = Buffer.alloc(Math.min(info.size, maxBytes) + 1);
      let length = 0;
      for (;;) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
        if (length > maxBytes) throw this.invalid(name, `grew past ${maxBytes} bytes (${setting})`);
        if (length === buffer.length) break;
      }
      return buffer.subarray(0, length);
    } finally {
      await handle.close();
    }
  }

  /** The real path of model file `name` for the engine, checked like readText's files. */
  async modelFile(name: string): Promise<ModelFileCheck> {
    const path = join(this.dir, name);
    let real: string;
    try {
      real = await realpath(path);
    } catch {
      return { problem: `${name} not found in ${this.dir}` };
    }
    const outside = await this.outsideRoot(path, real);
    if (outside) return { problem: `${name} ${outside}` };
    const info = await stat(real);
    if (!info.isFile()) return { problem: `${name} is not a regular file` };
    const max = this.limits.maxModelBytes;
    if (info.size > max)
      return { problem: `${name} is ${tooLarge(info.size, max, 'BUNDLES_MAX_MODEL_BYTES')}` };
    return { file: real };
  }

  /** Why `path` (real path `real`) is outside the root, or undefined if it is inside. */
  private async outsideRoot(path: string, real?: string): Promise<string | undefined> {
    const [rootReal, target] = await Promise.all([realpath(this.root), real ?? realpath(path)]);
    const rel = relative(rootReal, target);
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel))
      return `resolves to ${target}, outside the bundles folder ${rootReal}`;
    return undefined;
  }

  private invalid(path: string, message: string): BundleInvalidError {
    return new BundleInvalidError(this.dir, [{ ...(path && { path }), message }]);
  }
}

function tooLarge(size: number, max: number, setting: string): string {
  return `${size} bytes, more than the ${max} allowed (${setting}); not read`;
}
