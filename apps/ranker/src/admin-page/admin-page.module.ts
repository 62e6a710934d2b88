import { Module } from '@nestjs/common';
import { typedConfigProvider } from '@app/common';
import { PipelineModule } from '@app/pipeline';
import { AdminConfig } from '../admin/admin.config';
import { AdminPageController } from './admin-page.controller';
import { AdminPageMetrics } from './admin-page.metrics';
import { AdminPageSource } from './admin-page.source';
import { AdminSessions } from './admin-sessions';
import { RegistryAdminPageSource } from './registry-admin-page.source';

/** The /admin status page: its token config, its sessions and where its figures come from. */
@Module({
  imports: [PipelineModule],
  controllers: [AdminPageController],
  providers: [
    typedConfigProvider(AdminConfig),
    AdminSessions,
    AdminPageMetrics,
    { provide: AdminPageSource, useClass: RegistryAdminPageSource },
  ],
})
export class AdminPageModule {}
