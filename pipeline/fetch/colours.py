"""Colours: CSS colour values read as numbers, and how far apart two colours look.

`parse_colour` reads hex (#rgb, #rgba, #rrggbb, #rrggbbaa), rgb()/rgba() and hsl()/hsla() in
comma or space syntax, the CSS named colours and `transparent`; `contrast` is the WCAG 2
contrast ratio, 1 for the same colour and 21 for black on white.

Failure policy: never raises; a value that is not a colour (`currentcolor`, `var(--ink)`,
`color-mix(...)`) reads as None.
"""

from __future__ import annotations

import colorsys
import re

RGB = tuple[float, float, float]
RGBA = tuple[float, float, float, float]

WHITE: RGB = (255.0, 255.0, 255.0)

_HEX = re.compile(r"#(?:[0-9a-f]{3,4}|[0-9a-f]{6}|[0-9a-f]{8})")
_FUNCTION = re.compile(r"(rgba?|hsla?)\(([^)]*)\)")
_NAMED = dict(
    pair.replace(":", ":#").split(":")
    for pair in """aliceblue:f0f8ff antiquewhite:faebd7 aqua:00ffff aquamarine:7fffd4
    azure:f0ffff beige:f5f5dc bisque:ffe4c4 black:000000 blanchedalmond:ffebcd blue:0000ff
    blueviolet:8a2be2 brown:a52a2a burlywood:deb887 cadetblue:5f9ea0 chartreuse:7fff00
    chocolate:d2691e coral:ff7f50 cornflowerblue:6495ed cornsilk:fff8dc crimson:dc143c
    cyan:00ffff darkblue:00008b darkcyan:008b8b darkgoldenrod:b8860b darkgray:a9a9a9
    darkgreen:006400 darkgrey:a9a9a9 darkkhaki:bdb76b darkmagenta:8b008b darkolivegreen:556b2f
    darkorange:ff8c00 darkorchid:9932cc darkred:8b0000 darksalmon:e9967a darkseagreen:8fbc8f
    darkslateblue:483d8b darkslategray:2f4f4f darkslategrey:2f4f4f darkturquoise:00ced1
    darkviolet:9400d3 deeppink:ff1493 deepskyblue:00bfff dimgray:696969 dimgrey:696969
    dodgerblue:1e90ff firebrick:b22222 floralwhite:fffaf0 forestgreen:228b22 fuchsia:ff00ff
    gainsboro:dcdcdc ghostwhite:f8f8ff gold:ffd700 goldenrod:daa520 gray:808080 green:008000
    greenyellow:adff2f grey:808080 honeydew:f0fff0 hotpink:ff69b4 indianred:cd5c5c
    indigo:4b0082 ivory:fffff0 khaki:f0e68c lavender:e6e6fa lavenderblush:fff0f5
    lawngreen:7cfc00 lemonchiffon:fffacd lightblue:add8e6 lightcoral:f08080 lightcyan:e0ffff
    lightgoldenrodyellow:fafad2 lightgray:d3d3d3 lightgreen:90ee90 lightgrey:d3d3d3
    lightpink:ffb6c1 lightsalmon:ffa07a lightseagreen:20b2aa lightskyblue:87cefa
    lightslategray:778899 lightslategrey:778899 lightsteelblue:b0c4de lightyellow:ffffe0
    lime:00ff00 limegreen:32cd32 linen:faf0e6 magenta:ff00ff maroon:800000
    mediumaquamarine:66cdaa mediumblue:0000cd mediumorchid:ba55d3 mediumpurple:9370db
    mediumseagreen:3cb371 mediumslateblue:7b68ee mediumspringgreen:00fa9a
    mediumturquoise:48d1cc mediumvioletred:c71585 midnightblue:191970 mintcream:f5fffa
    mistyrose:ffe4e1 moccasin:ffe4b5 navajowhite:ffdead navy:000080 oldlace:fdf5e6
    olive:808000 olivedrab:6b8e23 orange:ffa500 orangered:ff4500 orchid:da70d6
    palegoldenrod:eee8aa palegreen:98fb98 paleturquoise:afeeee palevioletred:db7093
    papayawhip:ffefd5 peachpuff:ffdab9 peru:cd853f pink:ffc0cb plum:dda0dd powderblue:b0e0e6
    purple:800080 rebeccapurple:663399 red:ff0000 rosybrown:bc8f8f royalblue:4169e1
    saddlebrown:8b4513 salmon:fa8072 sandybrown:f4a460 seagreen:2e8b57 seashell:fff5ee
    sienna:a0522d silver:c0c0c0 skyblue:87ceeb slateblue:6a5acd slategray:708090
    slategrey:708090 snow:fffafa springgreen:00ff7f steelblue:4682b4 tan:d2b48c teal:008080
    thistle:d8bfd8 tomato:ff6347 turquoise:40e0d0 violet:ee82ee wheat:f5deb3 white:ffffff
    whitesmoke:f5f5f5 yellow:ffff00 yellowgreen:9acd32""".split()
)


def parse_colour(value: str) -> RGBA | None:
    """Return a CSS colour as red, green, blue (0-255) and alpha (0-1); None when unreadable."""
    value = value.strip().lower()
    if value == "transparent":
        return (0.0, 0.0, 0.0, 0.0)
    value = _NAMED.get(value, value)
    if _HEX.fullmatch(value):
        digits = value[1:] if len(value) > 5 else "".join(d * 2 for d in value[1:])
        channels = [float(int(digits[i : i + 2], 16)) for i in range(0, len(digits), 2)]
        alpha = channels[3] / 255 if len(channels) == 4 else 1.0
        return (channels[0], channels[1], channels[2], alpha)
    function = _FUNCTION.fullmatch(value)
    if function is None:
        return None
    parts = [p for p in re.split(r"[\s,/]+", function.group(2).strip()) if p]
    if len(parts) not in (3, 4):
        return None
    try:
        alpha = fraction(parts[3]) if len(parts) == 4 else 1.0
        if function.group(1).startswith("rgb"):
            red, green, blue = (
                fraction(p) * 255 if p.endswith("%") else float(p) for p in parts[:3]
            )
        else:
            hue = float(parts[0].removesuffix("deg")) / 360 % 1
            red, green, blue = (
                c * 255 for c in colorsys.hls_to_rgb(hue, fraction(parts[2]), fraction(parts[1]))
            )
    except ValueError:
        return None
    return (_clamp(red, 255), _clamp(green, 255), _clamp(blue, 255), _clamp(alpha, 1))


def contrast(first: RGB, second: RGB) -> float:
    """Return the WCAG contrast ratio of two colours (1 for the same colour, 21 at most)."""
    light, dark = sorted((_luminance(first), _luminance(second)), reverse=True)
    return (light + 0.05) / (dark + 0.05)


def blend(colour: RGBA, background: RGB) -> RGB:
    """Return the colour seen when a translucent colour is painted over a background."""
    alpha = colour[3]
    red, green, blue = (
        c * alpha + b * (1 - alpha) for c, b in zip(colour[:3], background, strict=True)
    )
    return (red, green, blue)


def fraction(value: str) -> float:
    """Return a CSS number or percentage as a number: "50%" is 0.5."""
    return float(value[:-1]) / 100 if value.endswith("%") else float(value)


def _clamp(value: float, top: float) -> float:
    return min(max(value, 0.0), top)


def _luminance(colour: RGB) -> float:
    def linear(channel: float) -> float:
        c = channel / 255
        return c / 12.92 if c <= 0.03928 else ((c + 0.055) / 1.055) ** 2.4

    red, green, blue = (linear(c) for c in colour)
    return 0.2126 * red + 0.7152 * green + 0.0722 * blue
