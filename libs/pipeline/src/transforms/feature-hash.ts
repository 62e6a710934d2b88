export { FNV_OFFSET_BASIS, fnv1a32 } from '@app/common';

/** Separator between the values of a `cross` column; a control character no id contains. */
export const CROSS_SEPARATOR = '\u0001';
