// Sizes the banner from the measured title, or from a guess when fonts are not ready yet.
var bannerWidth = titleWidth === null ? 300 : titleWidth + 40;
