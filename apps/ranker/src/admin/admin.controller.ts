import { Controller, Get, HttpCode, Param, Post, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiOkResponse, ApiParam, ApiResponse, ApiTags } from '@nestjs/swagger';
import { RequestInvalidError, SceneNotFoundError } from '@app/common';
import { BUNDLE_FOLDER_NAME, SceneListing, SceneRegistry } from '@app/pipeline';
import { ErrorBody } from '../http/error-body';
import { SceneListingBody, ScenesBody } from './admin-listing.dto';
import { AdminTokenGuard } from './admin-token.guard';

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
  constructor(private readonly registry: SceneRegistry) {}

  @Get('scenes')
  @ApiOkResponse({ type: ScenesBody })
  list(): { scenes: SceneListing[] } {
    return { scenes: this.registry.list() };
  }

  @Get('scenes/:scene')
  @ApiParam({ name: 'scene', example: 'feed' })
  @ApiOkResponse({ type: SceneListingBody })
  @ApiResponse({ status: 404, type: ErrorBody, description: 'SCENE_NOT_FOUND' })
  scene(@Param('scene') scene: string): SceneListing {
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
  async reload(@Param('scene') scene: string): Promise<SceneListing> {
    await this.registry.reload(checkedScene(scene), { retryFailed: true, origin: 'admin' });
    return this.found(scene);
  }

  /** The same for every scene, new scene folders included. */
  @Post('reload')
  @HttpCode(200)
  @ApiOkResponse({ type: ScenesBody })
  async reloadAll(): Promise<{ scenes: SceneListing[] }> {
    await this.registry.reload(undefined, { retryFailed: true, origin: 'admin' });
    return { scenes: this.registry.list() };
  }

  private found(scene: string): SceneListing {
    const listing = this.registry.describe(scene);
    if (!listing) throw new SceneNotFoundError(scene);
    return listing;
  }
}

function checkedScene(scene: string): string {
  if (BUNDLE_FOLDER_NAME.test(scene) && scene.length <= 100) return scene;
  const message = `'${scene}' is not a scene folder name (${BUNDLE_FOLDER_NAME})`;
  throw new RequestInvalidError(message, [{ path: 'scene', message }]);
}
