"""A text progress bar for long library calls (terminal or notebook)."""
import sys
import time


class ProgressBar:
    """One line, redrawn in place: the phase, a bar, the percentage, the
    elapsed time and an estimate of the time left."""

    WIDTH = 30
    REDRAW_SECONDS = 0.2  # a redraw at most this often (a notebook keeps every one)

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.start = time.monotonic()
        self.drawn = False
        self.last_draw = -1.0

    @classmethod
    def from_argument(cls, progress):
        """progress=True: a bar on stderr; a callable: called as
        progress(phase, fraction); False or None: nothing."""
        if progress is True:
            return cls()
        if callable(progress):
            return _Callback(progress)
        return None

    def update(self, phase, fraction):
        now = time.monotonic()
        if now - self.last_draw < self.REDRAW_SECONDS and fraction < 1:
            return
        self.last_draw = now
        elapsed = now - self.start
        filled = int(round(self.WIDTH * fraction))
        left = f", {elapsed * (1 - fraction) / fraction:.0f} s left" if fraction > 0.02 else ""
        line = (f"\r{phase[:28]:<28} [{'#' * filled}{'.' * (self.WIDTH - filled)}] "
                f"{100 * fraction:5.1f}% {elapsed:.0f} s{left}")
        self.stream.write(line.ljust(90))
        self.stream.flush()
        self.drawn = True

    def close(self):
        if self.drawn:
            self.stream.write("\n")
            self.stream.flush()


class _Callback:
    def __init__(self, fn):
        self.fn = fn

    def update(self, phase, fraction):
        self.fn(phase, fraction)

    def close(self):
        pass
