/** Test images: small byte strings shaped as a whole JPEG or PNG (the upload rules judge the first bytes). */

/** A small but whole JPEG: SOI, an APP0 segment, filler, EOI. */
export function jpegBytes(size = 600): Buffer {
  const b = Buffer.alloc(size, 0x11);
  b.set([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00], 0);
  b.set([0xff, 0xd9], size - 2);
  return b;
}
/** A small but whole PNG: signature, filler, IEND. */
export function pngBytes(size = 400): Buffer {
  const b = Buffer.alloc(size, 0x22);
  b.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 0);
  b.set([0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82], size - 12);
  return b;
}
