// SIGHUP for the relay process (main thread, cold): a reload once the relay is ready, ignored (and said so) before it
// and during the shutdown, never the default action (which would kill the process). A fault while applying a reload
// is logged and the relay keeps running: a bad file is a refusal the reload service reports, not an exception here.
import type { Logger } from '../log/logger.js';
import type { ReloadService } from './reload-service.js';

export class SighupReload {
  /** Set once the relay is ready (relay_ready): until then a SIGHUP is logged and ignored. */
  reloader: ReloadService | null = null;
  /** Set by the shutdown: a SIGHUP from then on is ignored. */
  shuttingDown = false;

  constructor(private readonly log: Logger) {
    process.on('SIGHUP', this.onSighup);
  }

  private readonly onSighup = (): void => {
    if (this.reloader === null) {
      this.log.warn({ event: 'config_reload_early' }, 'SIGHUP before the relay is ready: ignored (send it again once relay_ready is printed)');
    } else if (!this.shuttingDown) {
      try {
        this.reloader.reload('SIGHUP');
      } catch (err) {
        // A fault in applying (not a bad file: that is a refusal) must not take the relay down with it.
        this.log.error({ event: 'config_reload_failed', err }, 'configuration reload failed while applying: the relay keeps running; restart it to be sure of its state');
      }
    }
  };
}
