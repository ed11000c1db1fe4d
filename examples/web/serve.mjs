// A minimal static server for the example page (node's http module only), on 127.0.0.1:
//   /          this folder (index.html, app.mjs, ...)
//   /pkg/      the JS package: a folder with index.mjs, simplecpp.mjs and simplecpp.wasm (the npm
//              package folder, or build-wasm/js)
//   /models/   optional: a folder of .onnx files (the page fetches models/cnn.onnx when the
//              module was built without its built-in models)
// Usage: node examples/web/serve.mjs --package DIR [--models DIR] [--port N]   (default port 0: a
// free one). Prints "serving http://127.0.0.1:PORT/" once listening. The browser test imports
// startServer instead.
import {createReadStream, statSync} from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import {fileURLToPath, pathToFileURL} from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));

// .wasm must be application/wasm: browsers compile it while it downloads only with that type
// (otherwise emscripten falls back to a slower path and logs a warning).
const TYPES = {
  '.html': 'text/html; charset=utf-8', '.mjs': 'text/javascript; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8', '.css': 'text/css; charset=utf-8',
  '.json': 'application/json', '.wasm': 'application/wasm', '.onnx': 'application/octet-stream',
  '.png': 'image/png', '.md': 'text/markdown; charset=utf-8',
};

// The file a URL path names under `dir`, or null when it would leave `dir`.
function fileUnder(dir, relative) {
  const file = path.resolve(dir, '.' + path.posix.normalize('/' + relative));
  return file === dir || file.startsWith(dir + path.sep) ? file : null;
}

function resolveRequest(urlPath, {root, packageDir, modelsDir}) {
  if (urlPath.startsWith('/pkg/')) return fileUnder(packageDir, urlPath.slice('/pkg/'.length));
  if (urlPath.startsWith('/models/')) return modelsDir ? fileUnder(modelsDir, urlPath.slice('/models/'.length)) : null;
  return fileUnder(root, urlPath === '/' ? 'index.html' : urlPath.slice(1));
}

/**
 * Starts the server. options: packageDir (required), modelsDir, root (default: this folder), port
 * (default 0). Resolves to {url, close()} once listening.
 */
export function startServer({packageDir, modelsDir = null, root = HERE, port = 0}) {
  const dirs = {
    root: path.resolve(root),
    packageDir: path.resolve(packageDir),
    modelsDir: modelsDir ? path.resolve(modelsDir) : null,
  };
  const server = http.createServer((req, res) => {
    let urlPath;
    try {
      urlPath = decodeURIComponent(new URL(req.url, 'http://localhost').pathname);
    } catch {
      urlPath = null;
    }
    const file = urlPath && (req.method === 'GET' || req.method === 'HEAD') ? resolveRequest(urlPath, dirs) : null;
    let size = -1;
    try {
      if (file) {
        const st = statSync(file);
        if (st.isFile()) size = st.size;
      }
    } catch {
      // missing: 404 below
    }
    if (size < 0) {
      res.writeHead(404, {'Content-Type': 'text/plain; charset=utf-8'});
      res.end(`not found: ${req.url}\n`);
      return;
    }
    res.writeHead(200, {
      'Content-Type': TYPES[path.extname(file).toLowerCase()] || 'application/octet-stream',
      'Content-Length': size,
      // A development server: always serve the file as it is now (after a rebuild).
      'Cache-Control': 'no-store',
    });
    if (req.method === 'HEAD') res.end();
    else createReadStream(file).pipe(res);
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      const {port: actual} = server.address();
      resolve({
        url: `http://127.0.0.1:${actual}/`,
        close: () => new Promise((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
      });
    });
  });
}

function parseArgs(argv) {
  const args = {packageDir: null, modelsDir: null, port: 0};
  for (let i = 0; i < argv.length; ++i) {
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${argv[i]} needs a value`);
      return argv[++i];
    };
    if (argv[i] === '--package') args.packageDir = value();
    else if (argv[i] === '--models') args.modelsDir = value();
    else if (argv[i] === '--port') args.port = Number(value());
    else throw new Error(`unknown argument ${argv[i]} (usage: serve.mjs --package DIR [--models DIR] [--port N])`);
  }
  if (!args.packageDir) throw new Error('--package DIR is required (a folder with index.mjs, simplecpp.mjs, simplecpp.wasm)');
  return args;
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const {url} = await startServer(parseArgs(process.argv.slice(2)));
  console.log(`serving ${url}`);
}
