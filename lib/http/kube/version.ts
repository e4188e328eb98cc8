/**
 * `GET /version` as a Kubernetes API server answers it (apimachinery's version.Info), for
 * `kubectl version`: `gitVersion` is Allot's own version (package.json), `major` and `minor` its parts.
 * Allot is not a Kubernetes release, so kubectl may warn that the versions differ; it exits 0.
 */
import packageJson from '../../../package.json' with { type: 'json' };

const ARCHES: Readonly<Record<string, string>> = { x64: 'amd64', arm64: 'arm64', ia32: '386', arm: 'arm' };

export function versionDocument() {
  const version = packageJson.version;
  const [major = '0', minor = '0'] = version.split('.');
  return {
    major,
    minor,
    gitVersion: `v${version}`,
    gitCommit: '',
    gitTreeState: '',
    buildDate: '',
    goVersion: '',
    compiler: `node ${process.versions.node}`,
    platform: `${process.platform}/${ARCHES[process.arch] ?? process.arch}`,
  };
}
