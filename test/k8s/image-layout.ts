import { posix } from 'node:path';

/** What the final stage of a Dockerfile puts in the image, as far as the manifests depend on it. */
export interface ImageLayout {
  workdir: string;
  /** Container ports the image declares. */
  exposed: Set<number>;
  /** Absolute paths the stage copies into the image. */
  copied: string[];
  /** The default command (exec form). */
  cmd: string[];
}

/** The layout of the last stage of `dockerfile` (its text); instructions are read one a line. */
export function imageLayout(dockerfile: string): ImageLayout {
  const lines = dockerfile
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
  const last = lines.map((line) => /^FROM\s/i.test(line)).lastIndexOf(true);
  const layout: ImageLayout = { workdir: '/', exposed: new Set(), copied: [], cmd: [] };
  for (const line of lines.slice(last + 1)) {
    const [instruction, ...args] = line.split(/\s+/);
    switch (instruction.toUpperCase()) {
      case 'WORKDIR':
        layout.workdir = posix.resolve(layout.workdir, args[0]);
        break;
      case 'CMD':
        layout.cmd = JSON.parse(line.slice(instruction.length)) as string[];
        break;
      case 'EXPOSE':
        for (const port of args) layout.exposed.add(Number(port.split('/')[0]));
        break;
      case 'COPY': {
        const paths = args.filter((arg) => !arg.startsWith('--'));
        const dest = posix.resolve(layout.workdir, paths[paths.length - 1]);
        const sources = paths.slice(0, -1);
        // `COPY a b ./` puts a and b inside the destination; `COPY dir ./dir` is the folder itself.
        const intoFolder = paths[paths.length - 1].endsWith('/') || sources.length > 1;
        for (const src of sources) {
          layout.copied.push(intoFolder ? posix.join(dest, posix.basename(src)) : dest);
        }
        break;
      }
    }
  }
  return layout;
}

/** Whether `path` (absolute) lies in something the image copies. */
export function inImage(layout: ImageLayout, path: string): boolean {
  return layout.copied.some((copied) => path === copied || path.startsWith(`${copied}/`));
}
