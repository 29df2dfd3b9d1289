# Summarises call 4's timeline dumps (python3 timeline_tiles.py DIR_OF_BINS).
import struct, sys, glob, statistics as st
T=128; W=8+3*T+4*8; CT=264; F=192
def load(f):
    d=open(f,'rb').read(); n=len(d)//8
    w=struct.unpack('<%dQ'%n,d)
    return [w[c*W:(c+1)*W] for c in range(CT)], w[-1]
GHZ=1.98e3  # cycles per us
for f in sorted(glob.glob(sys.argv[1] + '/*hd_256*_r1.bin')):  # the probe stamps head_dim 256 only
    ctas, ns = load(f)
    name=f.split('Bound_')[1][:40]
    iss=[];land=[];rel=[];lat=[]; gap_at=[]; total=[]
    per_tile_lat=[[] for _ in range(T)]; per_tile_landgap=[[] for _ in range(T)]; per_tile_issgap=[[] for _ in range(T)]
    segs=[]
    for c in ctas:
        e=c[1]
        if e==0: continue
        I=[(c[8+i]-e)/GHZ if c[8+i] else None for i in range(T)]
        L=[(c[8+T+i]-e)/GHZ if c[8+T+i] else None for i in range(T)]
        R=[(c[8+2*T+i]-e)/GHZ if c[8+2*T+i] else None for i in range(T)]
        for i in range(T):
            if I[i] is not None and L[i] is not None: per_tile_lat[i].append(L[i]-I[i])
            if i>0 and L[i] and L[i-1]: per_tile_landgap[i].append(L[i]-L[i-1])
            if i>0 and I[i] and I[i-1]: per_tile_issgap[i].append(I[i]-I[i-1])
        total.append((c[3]-e)/GHZ)
        s=[[(c[8+3*T+4*j+k]-e)/GHZ if c[8+3*T+4*j+k] else None for k in range(4)] for j in range(min(c[2],8))]
        segs.append(s)
    print('==',name,'kernel ms',ns/1e6,'CTA consumer time median us',round(st.median(total),1))
    def m(x): return round(st.median(x),2) if x else None
    for lo,hi in [(0,16),(16,48),(48,60),(60,64),(64,68),(68,72),(72,80),(80,96),(96,128)]:
        print('  tiles %d-%d: issue gap %s, issue->land %s, land gap %s'%(F+lo,F+hi-1, m(sum(per_tile_issgap[lo:hi],[])), m(sum(per_tile_lat[lo:hi],[])), m(sum(per_tile_landgap[lo:hi],[]))))
    if segs and len(segs[0])>1:
        # segment stamps: prod start, cons start, q ready, fold end (us)
        for j in range(min(4,len(segs[0]))):
            vals=[s[j] for s in segs if len(s)>j]
            print('  seg',j,'prod start',m([v[0] for v in vals if v[0]]),'cons start',m([v[1] for v in vals if v[1]]),'q ready',m([v[2] for v in vals if v[2]]),'fold end',m([v[3] for v in vals if v[3]]))
