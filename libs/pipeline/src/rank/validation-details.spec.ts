import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { RankRequestDto } from './rank-request.dto';
import { validationDetails } from './validation-details';

/** Validates a plain body the way the edges do and flattens the errors. */
function detailsOf(body: object) {
  return validationDetails(validateSync(plainToInstance(RankRequestDto, body)));
}

const valid = {
  user: { id: 'u1', features: { age: 30 } },
  context: { hour: 9 },
  candidates: [{ id: 'a' }, { id: 'b', features: { price: 3, promo: true } }],
  topK: 5,
};

describe('validationDetails', () => {
  it('has nothing to report for a valid request', () => {
    expect(detailsOf(valid)).toEqual([]);
  });

  it('names a candidate field as candidates[i].field', () => {
    const details = detailsOf({
      ...valid,
      candidates: [{ id: 'a' }, { id: 'b' }, { id: 'c' }, { id: '' }],
    });
    expect(details).toEqual([{ path: 'candidates[3].id', message: 'id should not be empty' }]);
  });

  it('names every bad candidate with its own index', () => {
    const details = detailsOf({
      ...valid,
      candidates: [{ id: 7 }, { id: 'ok' }, { id: 'x', features: { tags: ['a'] } }],
    });
    const paths = details.map((d) => d.path);
    expect(paths).toContain('candidates[0].id');
    expect(paths).toContain('candidates[2].features');
    expect(paths).not.toContain('candidates[1].id');
    expect(details).toContainEqual({
      path: 'candidates[2].features',
      message: 'features .tags must be a string, finite number or boolean',
    });
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
    const details = detailsOf({ ...valid, candidates: [] });
    expect(details).toEqual([{ path: 'candidates', message: 'candidates should not be empty' }]);
    const missing = detailsOf({ user: valid.user });
    expect(missing.filter((d) => d.path === 'candidates').length).toBeGreaterThanOrEqual(2);
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
