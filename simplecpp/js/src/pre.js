// --pre-js of the JS API module (simplecpp_wasm). Emscripten 3.1.6's ES-module output still calls
// require() and reads __dirname under node, which ES modules lack: index.mjs passes them in as
// Module.nodeRequire / Module.nodeDirname (these vars shadow the missing globals in the factory).
if (Module['nodeRequire']) {
  var require = Module['nodeRequire'];
  var __dirname = Module['nodeDirname'];
}
