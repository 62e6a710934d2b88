import { Controller, Get } from '@nestjs/common';
import { ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, HealthIndicatorService } from '@nestjs/terminus';
import { SceneRegistry, SceneTrafficControl } from '@app/pipeline';

/** Terminus's @HealthCheck() documents the 200 and 503 bodies in /docs itself. */
@ApiTags('health')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly indicators: HealthIndicatorService,
    private readonly scenes: SceneRegistry,
    private readonly traffic: SceneTrafficControl,
  ) {}

  /** The process is up and its event loop answers. */
  @Get('live')
  @HealthCheck()
  live() {
    return this.health.check([() => this.indicators.check('process').up()]);
  }

  /**
   * Every bundle found at boot has been loaded (or rejected), each scene's traffic (traffic.yaml,
   * a stored override) applied, and at least one scene serves.
   */
  @Get('ready')
  @HealthCheck()
  ready() {
    return this.health.check([
      () => {
        const scenes = this.scenes.status();
        const check = this.indicators.check('scenes');
        if (!this.scenes.ready)
          return check.down({ scenes, message: 'bundles are loading or none is valid' });
        return this.traffic.bootTrafficApplied
          ? check.up({ scenes })
          : check.down({ scenes, message: 'traffic configs are being applied' });
      },
    ]);
  }
}
