import { html } from './html';
import { renderPage } from './page-layout';

/** The token form of /admin; `error` is shown above it after a refused attempt. */
export function renderLoginPage(error?: string): string {
  return renderPage(
    'Ranker status: sign in',
    html`<header><h1>Ranker status</h1></header>
      <main>
        <form class="login" method="post" action="/admin/login">
          <h2>Sign in</h2>
          ${error !== undefined && html`<p class="error" role="alert">${error}</p>`}
          <label for="token">Admin token (<code>RANKER_ADMIN_TOKEN</code>)</label>
          <input
            id="token"
            name="token"
            type="password"
            autocomplete="current-password"
            required
            autofocus
          />
          <button type="submit">Sign in</button>
        </form>
      </main>`,
  );
}
