# Shared by the tool tests (sourced; not a test itself): a temporary folder
# removed at exit, fail, and expect. Sets $tmp.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# expect CODE PATTERN -- command...: exit code and a stdout/stderr pattern
# (extended regex, any case; empty: no check)
expect() {
  local code=$1 pat=$2; shift 3
  "$@" >"$tmp/out" 2>"$tmp/err"
  local rc=$?
  [[ $rc -eq $code ]] || { cat "$tmp/err" >&2; fail "'$*' exited $rc, expected $code"; }
  [[ -z "$pat" ]] || grep -qiE -- "$pat" "$tmp/err" "$tmp/out" || { cat "$tmp/err" >&2; fail "'$*': no '$pat' in its output"; }
}
