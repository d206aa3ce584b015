// The JupyterLab application the browser test drives: JupyterLab's own
// shell and extensions for notebooks, the main menu (Kernel, Run), output
// rendering and settings, put together as JupyterLab's examples/app does.
import { PageConfig, URLExt } from '@jupyterlab/coreutils';

// Chunks and assets load from the server's static URL for this app.
// eslint-disable-next-line no-undef
__webpack_public_path__ = URLExt.join(PageConfig.getOption('fullStaticUrl'), '/');

require('gotrain-lab-style');

window.addEventListener('load', async () => {
  const { JupyterLab } = require('@jupyterlab/application');
  const mods = [
    require('@jupyterlab/application-extension'),
    require('@jupyterlab/apputils-extension'),
    require('@jupyterlab/codemirror-extension'),
    require('@jupyterlab/completer-extension'),
    require('@jupyterlab/docmanager-extension'),
    require('@jupyterlab/filebrowser-extension'),
    require('@jupyterlab/mainmenu-extension'),
    require('@jupyterlab/notebook-extension'),
    require('@jupyterlab/rendermime-extension'),
    require('@jupyterlab/shortcuts-extension'),
    require('@jupyterlab/theme-light-extension'),
    require('@jupyterlab/translation-extension'),
    require('@jupyterlab/ui-components-extension'),
  ];
  const lab = new JupyterLab();
  lab.registerPluginModules(mods);
  await lab.start();
  await lab.restored;
  // The test opens documents through the application's own commands.
  window.gotrainLab = lab;
  document.body.dataset.gotrainLab = 'ready';
});
