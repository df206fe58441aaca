/* stb_image and stb_image_write (Debian's libstb-dev): a PNG encoded in
 * memory before the region is decoded inside it. */
#include "corpus.h"
#define STB_IMAGE_IMPLEMENTATION
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_ONLY_PNG
#include <stb/stb_image.h>
#include <stb/stb_image_write.h>

#define W 24
#define H 16

int main(int argc, char **argv)
{
   corpus_open(argc, argv);
   unsigned char *img = malloc(W * H * 3);
   for (int i = 0; i < W * H * 3; i++)
      img[i] = (unsigned char)((i * 7) ^ (i >> 3));
   int png_len = 0;
   unsigned char *png = stbi_write_png_to_mem(img, W * 3, W, H, 3, &png_len);
   corpus_array("png", png, png_len);
   corpus_array("img", img, W * H * 3);
   int w, h, comp;
   CORPUS_START;
   unsigned char *pixels = stbi_load_from_memory(png, png_len, &w, &h, &comp, 0);
   long diff = 0;
   for (int i = 0; i < W * H * 3; i++)
      diff += pixels[i] != img[i];
   CORPUS_STOP;
   /* stb_image stores the image in its decoder's `out` field, where it
    * is allocated, and moves it to its return value later: mapvis names a
    * block by the statement that stores the allocation's result. */
   corpus_array("pixels|a->out", pixels, (size_t)w * h * comp);
   corpus_close();
   printf("%d %d %d %ld\n", w, h, comp, diff);
   return 0;
}
