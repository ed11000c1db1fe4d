// Emscripten --pre-js for node builds: emscripten's getenv() sees only its own ENV object, not
// the host environment, so copy process.env into ENV before main() runs (SIMPLECPP_ONNX_TESTS,
// the CLI's --from-env, ...).
Module['preRun'] = Module['preRun'] || [];
Module['preRun'].push(function() {
  if (typeof process !== 'undefined' && process.env) {
    for (var key in process.env) ENV[key] = process.env[key];
  }
});
