import { Module } from '@nestjs/common';
import { typedConfigProvider } from '@app/common';
import { PipelineModule } from '@app/pipeline';
import { AdminConfig } from './admin.config';
import { AdminController } from './admin.controller';
import { AdminMetrics } from './admin.metrics';
import { AdminTokenGuard } from './admin-token.guard';

/** Imported by the app only when RANKER_ADMIN_TOKEN is set: otherwise no admin route exists. */
@Module({
  imports: [PipelineModule],
  controllers: [AdminController],
  providers: [typedConfigProvider(AdminConfig), AdminMetrics, AdminTokenGuard],
})
export class AdminModule {}
