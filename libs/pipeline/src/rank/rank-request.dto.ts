import { Type } from 'class-transformer';
import {
  ArrayNotEmpty,
  IsArray,
  IsDefined,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsString,
  Max,
  MaxLength,
  Min,
  registerDecorator,
  ValidateNested,
  ValidationArguments,
} from 'class-validator';
import { FeatureRow, isFeatureValue } from '@app/features';

/** A flat map of feature name to string, finite number or boolean. */
function IsFeatureMap(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isFeatureMap',
      target: target.constructor,
      propertyName: propertyName as string,
      validator: {
        validate: (value: unknown) => featureMapProblem(value) === undefined,
        defaultMessage: (args?: ValidationArguments) =>
          `${args?.property} ${featureMapProblem(args?.value)}`,
      },
    });
}

function featureMapProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return 'must be an object of features';
  for (const [name, v] of Object.entries(value)) {
    if (!isFeatureValue(v)) return `.${name} must be a string, finite number or boolean`;
  }
  return undefined;
}

export class UserDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  id: string;

  @IsOptional()
  @IsFeatureMap()
  features?: FeatureRow;
}

export class CandidateDto {
  @IsString()
  @IsNotEmpty()
  @MaxLength(256)
  id: string;

  @IsOptional()
  @IsFeatureMap()
  features?: FeatureRow;
}

/** Shape of a rank request at both edges; limits that need configuration are in checkRankRequest. */
export class RankRequestDto {
  @IsDefined()
  @ValidateNested()
  @Type(() => UserDto)
  user: UserDto;

  @IsOptional()
  @IsFeatureMap()
  context?: FeatureRow;

  @IsArray()
  @ArrayNotEmpty()
  @ValidateNested({ each: true })
  @Type(() => CandidateDto)
  candidates: CandidateDto[];

  @IsOptional()
  @IsInt()
  @Min(1)
  topK?: number;

  /** Rows not scored within this many milliseconds are dropped and the call fails with 504. */
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(60_000)
  timeoutMs?: number;
}
