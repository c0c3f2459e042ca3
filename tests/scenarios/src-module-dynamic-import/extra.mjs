export function install() {
  window.extraLink = window.base + '/extras';
}
