import { BadRequestException, ValidationPipe } from '@nestjs/common';
import { validationDetails } from '@app/pipeline';

/** class-validator at the HTTP edge; a 400 names the path of every bad field. */
export function requestValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    transform: true,
    exceptionFactory: (errors) => {
      const details = validationDetails(errors);
      return new BadRequestException({
        code: 'REQUEST_INVALID',
        message: `invalid request: ${details
          .map((d) => `${d.path}: ${d.message}`)
          .slice(0, 5)
          .join('; ')}`,
        details,
      });
    },
  });
}
