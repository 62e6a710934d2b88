import { RankerClient } from './ranker-client';

/** The OpenAPI document is built from the classes that carry the contract and covers every route. */
describe('GET /docs (OpenAPI)', () => {
  let ranker: RankerClient;

  beforeAll(async () => {
    ranker = await RankerClient.start();
  });
  afterAll(() => ranker.close());

  it.each(['/docs', '/docs-json'])('%s serves the document as JSON', async (path) => {
    const reply = await ranker.request('GET', path);
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toMatch(/^application\/json/);
    expect(reply.body.openapi).toMatch(/^3\./);
    expect(Object.keys(reply.body.paths).sort()).toEqual([
      '/health/live',
      '/health/ready',
      '/metrics',
      '/v1/scenes/{scene}/rank',
    ]);
  });

  it('describes the rank route: its request, its 200 answer and the error body', async () => {
    const { body: doc } = await ranker.request('GET', '/docs');
    const rank = doc.paths['/v1/scenes/{scene}/rank'].post;
    expect(rank.parameters).toEqual([expect.objectContaining({ name: 'scene', in: 'path' })]);
    expect(rank.requestBody.content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/RankRequest',
    });
    expect(rank.responses['200'].content['application/json'].schema).toEqual({
      $ref: '#/components/schemas/RankResultBody',
    });
    for (const status of ['400', '404', '413', '415', '503', '504'])
      expect(rank.responses[status].content['application/json'].schema).toEqual({
        $ref: '#/components/schemas/ErrorBody',
      });

    const { RankRequest, RankUser, RankCandidate, ErrorBody } = doc.components.schemas;
    expect(Object.keys(RankRequest.properties).sort()).toEqual([
      'candidates',
      'context',
      'timeoutMs',
      'topK',
      'user',
    ]);
    expect(RankRequest.required.sort()).toEqual(['candidates', 'user']);
    expect(RankRequest.properties.candidates).toMatchObject({
      type: 'array',
      minItems: 1,
      items: { $ref: '#/components/schemas/RankCandidate' },
    });
    expect(RankRequest.properties.timeoutMs).toMatchObject({
      type: 'integer',
      minimum: 1,
      maximum: 60000,
    });
    expect(RankUser.required).toEqual(['id']);
    expect(RankCandidate.properties.id).toMatchObject({ type: 'string', maxLength: 256 });
    expect(RankCandidate.properties.features.additionalProperties.oneOf).toEqual([
      { type: 'string' },
      { type: 'number' },
      { type: 'boolean' },
    ]);
    expect(ErrorBody.required.sort()).toEqual(['code', 'details', 'message']);
  });

  it('describes health and metrics', async () => {
    const { body: doc } = await ranker.request('GET', '/docs');
    expect(doc.paths['/health/ready'].get.responses).toHaveProperty('200');
    expect(doc.paths['/health/ready'].get.responses).toHaveProperty('503');
    expect(doc.paths['/health/live'].get.responses).toHaveProperty('200');
    expect(doc.paths['/metrics'].get.responses['200'].content).toHaveProperty('text/plain');
  });
});
