// A slow parser-blocking script: the panel below it is parsed only after it ran.
document.body.setAttribute('data-layout', 'wide');
