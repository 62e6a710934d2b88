import { INestApplication } from '@nestjs/common';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/**
 * Serves the OpenAPI document of every route, built from the same classes that carry the rank
 * contract, as JSON at `/docs` and `/docs-json`. No HTML UI: Swagger UI on Fastify needs
 * `@fastify/static`, which is not a dependency; the JSON loads into any OpenAPI viewer.
 */
export function serveOpenApi(app: INestApplication): void {
  const config = new DocumentBuilder()
    .setTitle('Ranker')
    .setDescription('Recommendation fine-ranking: rank API, health and metrics')
    .setVersion('1')
    .build();
  const document = SwaggerModule.createDocument(app, config);
  SwaggerModule.setup('docs', app, document, { ui: false, raw: ['json'], jsonDocumentUrl: 'docs' });
  SwaggerModule.setup('docs', app, document, { ui: false, raw: ['json'] });
}
