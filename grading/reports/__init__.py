"""What the judge writes about results: the console, feedback files, the class summary, the gradebook and exports.
Plain data in, text out: no module here imports torch."""
