import { ErrorDetail } from '@app/common';
import { ValidationError } from 'class-validator';

/** Flattens class-validator's nested errors into `candidates[3].id`-style paths. */
export function validationDetails(errors: readonly ValidationError[], parent = ''): ErrorDetail[] {
  const details: ErrorDetail[] = [];
  for (const error of errors) {
    const path = /^\d+$/.test(error.property)
      ? `${parent}[${error.property}]`
      : parent === ''
        ? error.property
        : `${parent}.${error.property}`;
    for (const message of Object.values(error.constraints ?? {})) details.push({ path, message });
    if (error.children?.length) details.push(...validationDetails(error.children, path));
  }
  return details;
}
