import {
  Body,
  Controller,
  Delete,
  Get,
  HttpCode,
  Param,
  Post,
  Put,
  UseGuards,
} from '@nestjs/common';
import {
  ApiBearerAuth,
  ApiBody,
  ApiOkResponse,
  ApiParam,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { RequestInvalidError, SceneNotFoundError } from '@app/common';
import {
  BUNDLE_FOLDER_NAME,
  SceneListing,
  SceneRegistry,
  SceneTraffic,
  SceneTrafficControl,
} from '@app/pipeline';
import { ErrorBody } from '../http/error-body';
import { SceneListingBody, ScenesBody } from './admin-listing.dto';
import { AdminTokenGuard } from './admin-token.guard';
import { trafficChange } from './traffic-change';

/** A scene's listing with its rollout: the traffic in force, the canary's guard, the shadows. */
export type SceneAdminView = SceneListing & { rollout: SceneTraffic | null };

/**
 * The admin API of the bundles: what every scene serves and why its other versions do not, and
 * reloads. Served only when RANKER_ADMIN_TOKEN is set, and only to callers bearing it.
 */
@ApiTags('admin')
@ApiBearerAuth()
@ApiResponse({ status: 401, type: ErrorBody, description: 'UNAUTHORIZED: no bearer token' })
@ApiResponse({ status: 403, type: ErrorBody, description: 'FORBIDDEN: not the admin token' })
@UseGuards(AdminTokenGuard)
@Controller('v1/admin')
export class AdminController {
  constructor(
    private readonly registry: SceneRegistry,
    private readonly traffic: SceneTrafficControl,
  ) {}

  @Get('scenes')
  @ApiOkResponse({ type: ScenesBody })
  list(): { scenes: SceneAdminView[] } {
    return { scenes: this.registry.list().map((listing) => this.withRollout(listing)) };
  }

  @Get('scenes/:scene')
  @ApiParam({ name: 'scene', example: 'feed' })
  @ApiOkResponse({ type: SceneListingBody })
  @ApiResponse({ status: 404, type: ErrorBody, description: 'SCENE_NOT_FOUND' })
  scene(@Param('scene') scene: string): SceneAdminView {
    return this.found(checkedScene(scene));
  }

  /**
   * Scans the scene's folder now, loading again versions that failed, and tells the other
   * replicas to do the same; answers once the scan has loaded, swapped and retired what it found.
   */
  @Post('scenes/:scene/reload')
  @HttpCode(200)
  @ApiParam({ name: 'scene', example: 'feed' })
  @ApiOkResponse({ type: SceneListingBody })
  @ApiResponse({ status: 400, type: ErrorBody, description: 'REQUEST_INVALID: not a scene name' })
  @ApiResponse({ status: 404, type: ErrorBody, description: 'SCENE_NOT_FOUND' })
  async reload(@Param('scene') scene: string): Promise<SceneAdminView> {
    await this.registry.reload(checkedScene(scene), { retryFailed: true, origin: 'admin' });
    return this.found(scene);
  }

  /** The same for every scene, new scene folders included. */
  @Post('reload')
  @HttpCode(200)
  @ApiOkResponse({ type: ScenesBody })
  async reloadAll(): Promise<{ scenes: SceneAdminView[] }> {
    await this.registry.reload(undefined, { retryFailed: true, origin: 'admin' });
    return this.list();
  }

  /**
   * Makes the body (a traffic config in the JSON form of traffic.yaml, plus optional
   * `expectedRevision` and `reason`) the scene's override: validated against the scene's
   * versions, stored (Redis: every replica, across restarts), applied here at once and announced
   * to the other replicas. It wins over traffic.yaml until it is cleared.
   */
  @Put('scenes/:scene/traffic')
  @ApiParam({ name: 'scene', example: 'feed' })
  @ApiBody({
    schema: { type: 'object', example: { stable: 'v1', canary: { version: 'v2', percent: 5 } } },
  })
  @ApiOkResponse({ type: SceneListingBody })
  @ApiResponse({ status: 400, type: ErrorBody, description: 'REQUEST_INVALID: not an object' })
  @ApiResponse({ status: 404, type: ErrorBody, description: 'SCENE_NOT_FOUND' })
  @ApiResponse({ status: 409, type: ErrorBody, description: 'TRAFFIC_CONFLICT' })
  @ApiResponse({ status: 422, type: ErrorBody, description: 'TRAFFIC_INVALID, with every path' })
  @ApiResponse({ status: 503, type: ErrorBody, description: 'TRAFFIC_STORE_UNAVAILABLE' })
  async setTraffic(@Param('scene') scene: string, @Body() body: unknown): Promise<SceneAdminView> {
    const { config, expectedRevision, reason } = trafficChange(body, 'body');
    await this.traffic.set(checkedScene(scene), config, {
      by: 'admin',
      ...(reason !== undefined && { reason }),
      ...(expectedRevision !== undefined && { expectedRevision }),
    });
    return this.found(scene);
  }

  /**
   * Clears the scene's override: traffic.yaml (or, without one, the newest version) is in force.
   * Optional body `{ expectedRevision }`: refused (409) if another change came first.
   */
  @Delete('scenes/:scene/traffic')
  @ApiParam({ name: 'scene', example: 'feed' })
  @ApiBody({ required: false, schema: { type: 'object', example: { expectedRevision: 4 } } })
  @ApiOkResponse({ type: SceneListingBody })
  @ApiResponse({ status: 400, type: ErrorBody, description: 'REQUEST_INVALID: another field' })
  @ApiResponse({ status: 404, type: ErrorBody, description: 'SCENE_NOT_FOUND' })
  @ApiResponse({ status: 409, type: ErrorBody, description: 'TRAFFIC_CONFLICT' })
  @ApiResponse({ status: 503, type: ErrorBody, description: 'TRAFFIC_STORE_UNAVAILABLE' })
  async clearTraffic(
    @Param('scene') scene: string,
    @Body() body: unknown,
  ): Promise<SceneAdminView> {
    const { expectedRevision } = trafficChange(body, 'body', { only: ['expectedRevision'] });
    await this.traffic.clear(checkedScene(scene), expectedRevision);
    return this.found(scene);
  }

  /**
   * Stores the traffic in force without its canary as the override (`by: admin`). Optional body
   * `{ reason, expectedRevision }`.
   */
  @Post('scenes/:scene/rollback')
  @HttpCode(200)
  @ApiParam({ name: 'scene', example: 'feed' })
  @ApiBody({ required: false, schema: { type: 'object', example: { reason: 'p99 up' } } })
  @ApiOkResponse({ type: SceneListingBody })
  @ApiResponse({ status: 400, type: ErrorBody, description: 'REQUEST_INVALID: another field' })
  @ApiResponse({ status: 404, type: ErrorBody, description: 'SCENE_NOT_FOUND' })
  @ApiResponse({ status: 409, type: ErrorBody, description: 'TRAFFIC_CONFLICT' })
  @ApiResponse({ status: 422, type: ErrorBody, description: 'TRAFFIC_INVALID: no canary' })
  async rollback(@Param('scene') scene: string, @Body() body: unknown): Promise<SceneAdminView> {
    const { reason, expectedRevision } = trafficChange(body, 'body', {
      only: ['reason', 'expectedRevision'],
    });
    await this.traffic.rollback(checkedScene(scene), {
      by: 'admin',
      ...(reason !== undefined && { reason }),
      ...(expectedRevision !== undefined && { expectedRevision }),
    });
    return this.found(scene);
  }

  private found(scene: string): SceneAdminView {
    const listing = this.registry.describe(scene);
    if (!listing) throw new SceneNotFoundError(scene);
    return this.withRollout(listing);
  }

  private withRollout(listing: SceneListing): SceneAdminView {
    return { ...listing, rollout: this.traffic.describe(listing.scene) ?? null };
  }
}

function checkedScene(scene: string): string {
  if (BUNDLE_FOLDER_NAME.test(scene) && scene.length <= 100) return scene;
  const message = `'${scene}' is not a scene folder name (${BUNDLE_FOLDER_NAME})`;
  throw new RequestInvalidError(message, [{ path: 'scene', message }]);
}
