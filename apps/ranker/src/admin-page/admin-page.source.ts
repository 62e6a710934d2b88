import { AdminPageView } from './admin-page.view';

/** Where the /admin page's figures come from: the scene registry and the rollout state. */
export abstract class AdminPageSource {
  abstract view(): Promise<AdminPageView>;
}
