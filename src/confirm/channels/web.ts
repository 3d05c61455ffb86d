/**
 * The local web page as a confirmation channel. The page itself (src/web) serves the pending queue and
 * takes decisions into it; this channel only says whether the page can show a call, and opens the page
 * in the person's browser on the first held call (once per process; `LOOKFIRST_NO_OPEN=1` stops that).
 */
import type { OutOfBandChannel } from '../channel.js';

/** What the web channel needs. */
export interface WebChannelOptions {
  enabled: boolean;
  /** The page's address (access key included), once it listens. */
  url: () => string | undefined;
  /** Opens an address in the person's browser; errors are reported, never thrown. */
  openBrowser?: (url: string) => void;
}

/** The web page channel. */
export function createWebChannel(opts: WebChannelOptions): OutOfBandChannel {
  let opened = false;
  return {
    name: 'web',
    availability() {
      if (!opts.enabled) return 'disabled in the config (confirm.web.enabled)';
      return opts.url() === undefined ? 'the page is not listening' : true;
    },
    async present() {
      const url = opts.url();
      if (!opened && url && opts.openBrowser) {
        opened = true;
        opts.openBrowser(url);
      }
      return true;
    },
  };
}
