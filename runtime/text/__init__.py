"""Text every outside value crosses: the border that refuses or repairs hostile values
(`border`), JSON text on the hot paths (`jsontext`), the one id validator and ASCII-digit
parser (`idtext`).
"""
