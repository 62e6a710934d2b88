import { readFileSync } from 'node:fs';

/**
 * The fields of a Linux `/proc/.../stat` file (proc(5)) by their 1-based number, so that field 14
 * is `fields(path)(14)`. The command name (field 2) may hold spaces and parentheses: fields are
 * counted from the last `)`, where the state (field 3) follows. Throws off Linux (no such file).
 */
export function procStatFields(path: string): (field: number) => string {
  const stat = readFileSync(path, 'latin1');
  const fromState = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (field) => fromState[field - 3];
}
