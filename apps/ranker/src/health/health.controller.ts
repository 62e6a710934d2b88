import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { SceneRegistry } from '@app/pipeline';

/** Terminus's @HealthCheck() documents the 200 and 503 bodies in /docs itself. */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly scenes: SceneRegistry,
  ) {}

  /** The process is up and its event loop answers. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.indicators.check('process').up()]);
  }

  /** Every bundle found at boot has been loaded (or rejected) and at least one scene serves. */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => {
        const scenes = this.scenes.status();
        const check = this.indicators.check('scenes');
        return this.scenes.ready
          ? check.up({ scenes })
          : check.down({ scenes, message: 'bundles are loading or none is valid' });
      },
    ]);
  }
}
