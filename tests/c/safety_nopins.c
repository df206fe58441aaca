/* A program without GL_START/GL_STOP: a run of it records no region. */
int main(void)
{
    return 0;
}
