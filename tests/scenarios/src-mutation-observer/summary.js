// Shows how many rows there are, counted by the observer.
document.title = rowCount + ' rows';
