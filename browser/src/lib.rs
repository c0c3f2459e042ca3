//! Headless Chromium driven over the DevTools protocol: launching `/usr/bin/chromium` with the
//! flags a proxy needs, navigation, evaluation, input events and screenshots.
