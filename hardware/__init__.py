"""Camera backends, seat buttons, the marker sheet and the Pi service files.

* ``hardware.camera``: ``open_camera("file:game.mp4" | "device:0" | "picamera2" | "synthetic")``
* ``hardware.buttons``: ``open_buttons("gpiozero:N=17,E=27,S=22,W=23" | "mock")``
* ``hardware.markers``: the printable corner-marker sheet (PDF/PNG)
* ``hardware/pi/``: systemd unit, settings and the Raspberry Pi setup README
"""
