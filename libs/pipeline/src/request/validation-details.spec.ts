import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { RankRequestDto } from './rank-request.dto';
import { validationDetails } from './validation-details';

/** Validates a plain body the way the edges do and flattens the errors. */
function detailsOf(body: object) {
  return validationDetails(validateSync(plainToInstance(RankRequestDto, body)));
}

/** Candidates are not part of the DTO (see candidateProblems). */
const valid = {
  user: { id: 'u1', features: { age: 30 } },
  context: { hour: 9 },
  topK: 5,
};

describe('validationDetails', () => {
  it('has nothing to report for a valid request', () => {
    expect(detailsOf(valid)).toEqual([]);
  });

  it('names nested object fields with a dot', () => {
    const details = detailsOf({ ...valid, user: { id: '' } });
    expect(details).toEqual([{ path: 'user.id', message: 'id should not be empty' }]);
  });

  it('names top-level fields plainly', () => {
    const details = detailsOf({ ...valid, topK: 0, context: 'morning' });
    expect(details.map((d) => d.path).sort()).toEqual(['context', 'topK']);
  });

  it('keeps one entry per failed constraint', () => {
    const details = detailsOf({ ...valid, topK: 'five' });
    expect(details.map((d) => d.path)).toEqual(['topK', 'topK']);
  });

  it('flattens hand-built errors, including arrays nested in arrays', () => {
    const error = (
      property: string,
      constraints?: Record<string, string>,
      children: ValidationError[] = [],
    ): ValidationError => Object.assign(new ValidationError(), { property, constraints, children });
    const errors = [
      error('grid', undefined, [
        error('2', undefined, [error('0', { isInt: 'must be an integer' })]),
      ]),
      error('name', { a: 'first problem', b: 'second problem' }),
    ];
    expect(validationDetails(errors)).toEqual([
      { path: 'grid[2][0]', message: 'must be an integer' },
      { path: 'name', message: 'first problem' },
      { path: 'name', message: 'second problem' },
    ]);
  });
});
