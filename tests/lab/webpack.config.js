// webpack.config.js bundles src/index.js and the extensions' styles, schemas
// and themes into GOTRAIN_LAB_BUILD (default: build/lab at the repository
// root), which main.py serves.
const path = require('path');
const webpack = require('webpack');
const { Build } = require('@jupyterlab/builder');

const out = path.resolve(
  process.env.GOTRAIN_LAB_BUILD || path.join(__dirname, '..', '..', 'build', 'lab'),
);
const pkg = require('./package.json');

// The packages that are JupyterLab extensions: their schemas and themes are
// copied under out, and their styles imported by out/style.js.
const names = Object.keys(pkg.dependencies).filter(
  (name) => require(path.join(name, 'package.json')).jupyterlab !== undefined,
);
const extras = Build.ensureAssets({ packageNames: names, output: out });

const modules = [path.join(__dirname, 'node_modules'), 'node_modules'];

module.exports = [
  {
    entry: './src/index.js',
    context: __dirname,
    output: { path: out, filename: 'bundle.js', publicPath: 'auto' },
    mode: 'development',
    devtool: false,
    bail: true,
    resolve: {
      modules,
      alias: { 'gotrain-lab-style': path.join(out, 'style.js') },
      fallback: { path: false, fs: false, crypto: false, url: false, util: false },
    },
    resolveLoader: { modules },
    module: {
      rules: [
        { test: /\.css$/, use: ['style-loader', 'css-loader'] },
        { test: /\.(md|txt)$/, type: 'asset/source' },
        { test: /\.(jpg|png|gif|woff2?|ttf|eot|otf)(\?v=\d+\.\d+\.\d+)?$/, type: 'asset/resource' },
        { test: /\.svg(\?v=\d+\.\d+\.\d+)?$/, issuer: /\.css$/, type: 'asset/inline' },
        { test: /\.svg(\?v=\d+\.\d+\.\d+)?$/, issuer: /\.js$/, type: 'asset/source' },
        { test: /\.html$/, type: 'asset/resource' },
      ],
    },
    plugins: [
      new webpack.DefinePlugin({ 'process.env': '{}', 'process.cwd': '() => "/"' }),
      new webpack.ProvidePlugin({ process: require.resolve('process/browser.js') }),
    ],
    performance: { hints: false },
  },
].concat(extras);
